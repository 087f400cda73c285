// orrery-ns3: the packet-level half of orrery's CASSINI cross-check.
//
// It reads a scenario written by package internal/eval/ns3 (a fabric of
// point-to-point links, training jobs as cycles of compute and communication
// steps over persistent connections with fixed routes) and simulates it
// with ns-3's TCP (DCTCP, Cubic or NewReno, all with ECN; or MLTCP's Reno)
// and RED step marking at every switch port, or with a DCQCN sender of its
// own over UDP (DCQCN, or MLTCP's DCQCN) and RED marking between Kmin and
// Kmax. It prints one line per completed iteration and per-link and per-job
// counters; see internal/eval/ns3/doc.go for both formats.
//
// Model, briefly:
//   - Every job connection is one TCP connection opened at time 0 and kept
//     (as NCCL does). A communication step gives each of its connections a
//     number of bytes and a peak rate: the sender releases the bytes into the
//     socket at the peak rate (the job's own pace, as the fluid model's flow
//     peak), TCP sends them as the network lets it, and the step ends when
//     every receiver has all of its bytes. The release clock waits while the
//     socket is full, so a connection sends at most at its peak beyond a send
//     buffer's burst (catch_up 1: a backlog goes out as fast as TCP can). A
//     ring hop may be coupled to
//     the hop before it: it never sends more than the bytes it has received
//     plus a slack (one chunk of the ring), as a ring all-reduce forwards
//     what it receives.
//   - Each connection has its own pair of addresses, so that host routes at
//     every node pin its data to the exported path and its ACKs to the
//     exported reverse path (the fluid model's ECMP choice).
//   - A job with an agent asks the controller on stdin when its next
//     iteration may start ("R job t" out, "S t" in); the others start the
//     next iteration at once.
//   - DCQCN (cc dcqcn, mltcp-dcqcn): each connection is a UDP sender paced
//     at min(Rc, peak), its packets ECN-capable; the receiver sends a CNP
//     (a small UDP packet on the reverse path) at the first marked packet
//     once 50 us (the CNP interval) have passed since its last one; the
//     sender runs DCQCN's reaction point (cuts on CNPs, the alpha timer, the
//     rate timer and byte counter's fast recovery, additive and hyper
//     increase). Each communication step's senders start afresh at line
//     rate, as the fluid model's flows. ns-3.37 has no PFC: switch buffers
//     are deep, and a dropped packet (counted) is sent again at once.
//   - MLTCP (Rajasekaran et al.): mltcp-dcqcn scales RAI and RHAI, and
//     mltcp-reno NewReno's congestion-avoidance increase, by F = slope *
//     ratio + intercept, ratio the bytes the connection sent (acknowledged,
//     for TCP) in the current iteration over its bytes per iteration.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdarg>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

[[noreturn]] void
Fail(const std::string& msg)
{
    std::fprintf(stderr, "orrery-ns3: %s\n", msg.c_str());
    std::exit(2);
}

// Net is the network-wide configuration.
struct Net
{
    std::string cc = "dctcp";
    uint32_t redKBytes = 30000;     // marking threshold, bytes (20 packets of 1500)
    uint32_t queueBytes = 4000000;  // switch buffer per port, bytes
    uint32_t mss = 1448;        // TCP segment size
    int64_t minRtoNs = 5000000; // minimum retransmission timeout
    uint32_t delAck = 2;        // segments per ACK
    int64_t delAckTimeoutNs = 1000000;
    bool sack = false, timestamps = false;
    bool catchUp = false;       // a sender behind its release schedule may send faster than its peak
    uint32_t sndBuf = 131072;   // TCP send buffer, bytes
    uint32_t chunk = 1448;      // bytes the sender releases per pacing tick
    int64_t stopNs = 0;         // 0: when every job is done
    uint32_t seed = 1;
    // DCQCN (cc dcqcn, mltcp-dcqcn), rates and bytes as scaled by the Go side.
    double kmin = 5000, kmax = 200000, pmax = 0.01; // marking: bytes, probability
    uint32_t mtu = 1000;                            // payload bytes per packet
    int64_t cnpNs = 50000, alphaNs = 55000, rateNs = 55000;
    double g = 1.0 / 256, byteCounter = 10e6;
    int f = 5;
    double rai = 40e6, rhai = 200e6, minRate = 100e6, initAlpha = 1;
    // MLTCP's aggressiveness function F(r) = slope * r + intercept.
    double slope = 1, intercept = 1;

    bool Dcqcn() const { return cc == "dcqcn" || cc == "mltcp-dcqcn"; }
    bool Mltcp() const { return cc == "mltcp-dcqcn" || cc == "mltcp-reno"; }
};

struct Link
{
    int a, b;
    uint64_t bps;
    int64_t delayNs;
};

// Flow is one connection's share of a communication step.
struct Flow
{
    int conn;      // job-local connection index
    uint64_t bytes;
    double peakBps;
    int prev;      // job-local connection whose received bytes gate this one, -1 for none
    uint64_t slack;
};

struct Step
{
    int64_t computeNs = -1; // >= 0 for a compute step
    std::vector<Flow> flows;
};

struct Job;
struct Conn;
double MltcpFactor(const Conn& c);

// TcpMltcpReno is NewReno whose congestion-avoidance increase MLTCP scales
// by F(bytes ratio) of its connection.
class TcpMltcpReno : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpMltcpReno")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpMltcpReno>();
        return tid;
    }

    std::string GetName() const override { return "TcpMltcpReno"; }

    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpMltcpReno>(this); }

    const Conn* conn = nullptr;

  protected:
    // NewReno's: cwnd += MSS^2/cwnd per acknowledged segment, scaled.
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (segmentsAcked == 0)
            return;
        double f = conn ? MltcpFactor(*conn) : 1;
        double adder = f * static_cast<double>(tcb->m_segmentSize) * tcb->m_segmentSize / tcb->m_cWnd.Get();
        tcb->m_cWnd += static_cast<uint32_t>(std::max(1.0, adder));
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpMltcpReno);

// Conn is a persistent connection of a job.
struct Conn
{
    Job* job = nullptr;
    int local = 0; // index within its job
    int src = 0, dst = 0;
    std::vector<int> path, back; // node sequences, data and ACKs
    Ipv4Address saddr, daddr;
    uint16_t port = 0;
    Ptr<Socket> tx, rx;
    // Cumulative byte counts over the connection's life.
    uint64_t released = 0, written = 0, received = 0;
    // The current step.
    bool active = false;
    uint64_t txBase = 0, rxBase = 0; // counts when the step began
    const Flow* flow = nullptr;
    int64_t stepStartNs = 0;
    uint64_t ticks = 0;
    bool stalled = false; // the release clock waits for the last chunk to enter the socket
    int64_t intervalNs = 0;
    Conn* gatedBy = nullptr;
    std::vector<Conn*> gates; // connections this one's receiver gates
    // MLTCP: bytes per iteration, and the count when the iteration began.
    uint64_t iterBytes = 0, iterBase = 0;
    // DCQCN: the sender (reaction point) and receiver (notification point).
    Ptr<Socket> cnpTx, cnpRx;
    double line = 0;              // the sender's NIC rate
    double rc = 0, rt = 0, alpha = 1;
    bool cnped = false;           // had a CNP this step: alpha is set
    int iT = 0, iB = 0;
    double byteAcc = 0;           // bytes toward the next byte counter event
    uint64_t resend = 0;          // bytes dropped in the network, owed again
    uint64_t stepSent = 0;        // bytes sent in the current step
    EventId sendEv, alphaEv, rateEv;
    bool sending = false;         // a send is scheduled
    int64_t lastCnpNs = INT64_MIN / 2;
    bool markPending = false, cnpScheduled = false;
    uint64_t cnps = 0;
};

struct Job
{
    int id = 0;
    int64_t startNs = 0;
    int iterations = 0;
    bool agent = false;
    std::vector<Conn> conns;
    std::vector<Step> steps;
    std::vector<double> noise;
    // Runtime.
    int iter = 0;
    size_t step = 0;
    int pending = 0;
    int64_t iterStart = 0, commStart = -1;
    uint64_t iterMarks = 0, iterDrops = 0;
    uint64_t marks = 0, drops = 0, ackDrops = 0;
    bool done = false;
};

Net g_net;
std::vector<Link> g_links;
std::vector<Job> g_jobs;
int g_nodes = 0, g_servers = 0;
int g_left = 0;
std::map<uint32_t, Conn*> g_bySender, g_byReceiver; // address -> connection
std::FILE* g_out = stdout;

struct LinkStats
{
    uint64_t marks = 0, ackMarks = 0, drops = 0, ackDrops = 0, packets = 0;
    uint32_t maxQueue = 0;
};
std::vector<LinkStats> g_linkStats; // per directed link: 2*i is a->b, 2*i+1 is b->a

// ---- scenario input ----

std::vector<int>
ReadPath(std::istringstream& in)
{
    int n = 0;
    in >> n;
    if (!in || n < 2 || n > 64)
        Fail("bad path length");
    std::vector<int> p(n);
    for (auto& v : p)
    {
        in >> v;
        if (!in || v < 0 || v >= g_nodes)
            Fail("bad path node");
    }
    return p;
}

void
ReadScenario(std::istream& in)
{
    std::string line;
    if (!std::getline(in, line) || line != "orrery-ns3 1")
        Fail("not an orrery-ns3 v1 scenario");
    Job* job = nullptr;
    bool ended = false;
    while (std::getline(in, line))
    {
        std::istringstream s(line);
        std::string key;
        if (!(s >> key) || key[0] == '#')
            continue;
        if (key == "cc")
            s >> g_net.cc;
        else if (key == "red_k_bytes")
            s >> g_net.redKBytes;
        else if (key == "queue_bytes")
            s >> g_net.queueBytes;
        else if (key == "mss")
            s >> g_net.mss;
        else if (key == "min_rto_ns")
            s >> g_net.minRtoNs;
        else if (key == "del_ack")
            s >> g_net.delAck;
        else if (key == "del_ack_timeout_ns")
            s >> g_net.delAckTimeoutNs;
        else if (key == "sack")
            s >> g_net.sack;
        else if (key == "timestamps")
            s >> g_net.timestamps;
        else if (key == "catch_up")
            s >> g_net.catchUp;
        else if (key == "snd_buf")
            s >> g_net.sndBuf;
        else if (key == "chunk")
            s >> g_net.chunk;
        else if (key == "stop_ns")
            s >> g_net.stopNs;
        else if (key == "seed")
            s >> g_net.seed;
        else if (key == "dcqcn")
        {
            s >> g_net.kmin >> g_net.kmax >> g_net.pmax >> g_net.mtu >> g_net.cnpNs >> g_net.g >> g_net.alphaNs >>
                g_net.rateNs >> g_net.byteCounter >> g_net.f >> g_net.rai >> g_net.rhai >> g_net.minRate >> g_net.initAlpha;
            if (!s || !(g_net.kmax > g_net.kmin) || !(g_net.pmax > 0 && g_net.pmax <= 1) || g_net.mtu < 64 ||
                g_net.mtu > 65000 || g_net.cnpNs <= 0 || g_net.alphaNs <= 0 || g_net.rateNs <= 0 ||
                !(g_net.g > 0 && g_net.g < 1) || !(g_net.byteCounter > 0) || g_net.f < 0 || !(g_net.minRate > 0) ||
                !(g_net.initAlpha > 0 && g_net.initAlpha <= 1))
                Fail("bad dcqcn line: " + line);
        }
        else if (key == "mltcp")
        {
            s >> g_net.slope >> g_net.intercept;
            if (!s || !(g_net.slope >= 0) || !(g_net.intercept > 0))
                Fail("bad mltcp line: " + line);
        }
        else if (key == "nodes")
            s >> g_nodes >> g_servers;
        else if (key == "link")
        {
            Link l;
            s >> l.a >> l.b >> l.bps >> l.delayNs;
            if (!s || l.a < 0 || l.b < 0 || l.a >= g_nodes || l.b >= g_nodes || l.bps == 0)
                Fail("bad link: " + line);
            g_links.push_back(l);
        }
        else if (key == "job")
        {
            g_jobs.emplace_back();
            job = &g_jobs.back();
            int agent = 0;
            s >> job->id >> job->startNs >> job->iterations >> agent;
            job->agent = agent != 0;
            if (!s || job->iterations < 1 || job->startNs < 0)
                Fail("bad job: " + line);
        }
        else if (key == "conn")
        {
            if (!job)
                Fail("conn before job");
            Conn c;
            c.local = (int)job->conns.size();
            s >> c.src >> c.dst;
            if (!s || c.src < 0 || c.dst < 0 || c.src >= g_servers || c.dst >= g_servers || c.src == c.dst)
                Fail("bad conn: " + line);
            c.path = ReadPath(s);
            c.back = ReadPath(s);
            if (c.path.front() != c.src || c.path.back() != c.dst || c.back.front() != c.dst ||
                c.back.back() != c.src)
                Fail("conn path does not join its servers: " + line);
            job->conns.push_back(c);
        }
        else if (key == "compute")
        {
            if (!job)
                Fail("compute before job");
            Step st;
            s >> st.computeNs;
            if (!s || st.computeNs < 0)
                Fail("bad compute: " + line);
            job->steps.push_back(st);
        }
        else if (key == "comm")
        {
            if (!job)
                Fail("comm before job");
            job->steps.emplace_back();
        }
        else if (key == "flow")
        {
            if (!job || job->steps.empty() || job->steps.back().computeNs >= 0)
                Fail("flow outside a comm step");
            Flow f;
            s >> f.conn >> f.bytes >> f.peakBps >> f.prev >> f.slack;
            int n = (int)job->conns.size();
            if (!s || f.conn < 0 || f.conn >= n || f.prev < -1 || f.prev >= n || f.bytes == 0 ||
                !(f.peakBps > 0))
                Fail("bad flow: " + line);
            job->steps.back().flows.push_back(f);
        }
        else if (key == "noise")
        {
            if (!job)
                Fail("noise before job");
            double v;
            while (s >> v)
                job->noise.push_back(v);
        }
        else if (key == "end")
        {
            ended = true;
            break;
        }
        else
            Fail("unknown line: " + line);
        if (key != "noise" && s.fail())
            Fail("bad line: " + line);
    }
    if (!ended)
        Fail("scenario has no end line");
    if (g_nodes < 2 || g_servers < 1 || g_jobs.empty())
        Fail("scenario has no nodes or no jobs");
    for (auto& j : g_jobs)
    {
        if (j.steps.empty())
            Fail("job without steps");
        for (auto& st : j.steps)
            for (auto& f : st.flows)
                j.conns[f.conn].iterBytes += f.bytes;
    }
}

// ---- the network ----

NodeContainer g_nodeC;
// device[a][b]: the device on node a toward node b; link index the same way.
std::map<std::pair<int, int>, Ptr<NetDevice>> g_dev;
std::map<std::pair<int, int>, int> g_dirLink;

Ipv4Address
Addr(uint32_t base, uint32_t k)
{
    return Ipv4Address(base + k);
}

void
OnMark(int dl, Ptr<const QueueDiscItem> item, const char*)
{
    auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    auto it = g_bySender.end();
    if (ip)
        it = g_bySender.find(ip->GetHeader().GetSource().Get());
    if (it == g_bySender.end())
        g_linkStats[dl].ackMarks++; // DCTCP's ACKs are ECN-capable too
    else
    {
        g_linkStats[dl].marks++;
        Job* j = it->second->job;
        j->marks++;
        j->iterMarks++;
    }
}

void DcqcnSend(Conn* c);

void
OnDrop(int dl, Ptr<const QueueDiscItem> item)
{
    auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    uint32_t src = ip ? ip->GetHeader().GetSource().Get() : 0;
    if (auto it = g_bySender.find(src); it != g_bySender.end())
    {
        g_linkStats[dl].drops++;
        it->second->job->drops++;
        it->second->job->iterDrops++;
        if (g_net.Dcqcn() && ip)
        {
            // No PFC here: the packet is sent again (a stand-in for the
            // lossless fabric; the drop is counted).
            Conn* c = it->second;
            uint32_t payload = ip->GetPacket()->GetSize();
            c->resend += payload > 8 ? payload - 8 : 0; // less the UDP header
            if (c->active && !c->sending)
            {
                c->sending = true;
                c->sendEv = Simulator::ScheduleNow(&DcqcnSend, c);
            }
        }
    }
    else
    {
        g_linkStats[dl].ackDrops++;
        if (auto r = g_byReceiver.find(src); r != g_byReceiver.end())
            r->second->job->ackDrops++;
    }
}

void
OnDequeue(int dl, Ptr<const QueueDiscItem>)
{
    g_linkStats[dl].packets++;
}

void
OnQueue(int dl, uint32_t, uint32_t now)
{
    if (now > g_linkStats[dl].maxQueue)
        g_linkStats[dl].maxQueue = now;
}

void
BuildNetwork()
{
    g_nodeC.Create(g_nodes);
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper staticRouting;
    stack.SetRoutingHelper(staticRouting);
    stack.SetIpv6StackInstall(false);
    stack.Install(g_nodeC);

    // The switch ports' marking, on the queue in bytes (ACKs count for
    // their size, as in a switch's cell buffer).
    TrafficControlHelper red;
    if (g_net.Dcqcn())
    {
        // DCQCN's marking: probability 0 up to Kmin, rising linearly to
        // Pmax at Kmax (ns-3's RED: LInterm = 1/Pmax, the queue itself
        // with weight 1), every packet above Kmax (Gentle off, marking
        // instead of dropping). MeanPktSize is a data packet, whose
        // probability byte mode then leaves as is.
        red.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, g_net.queueBytes)),
                             "MinTh", DoubleValue(g_net.kmin),
                             "MaxTh", DoubleValue(g_net.kmax),
                             "QW", DoubleValue(1),
                             "LInterm", DoubleValue(1 / g_net.pmax),
                             "Gentle", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "MeanPktSize", UintegerValue(g_net.mtu + 28));
    }
    else
    {
        // DCTCP's step marking: every ECN-capable packet that arrives to
        // more than K bytes is marked.
        red.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, g_net.queueBytes)),
                             "MinTh", DoubleValue(g_net.redKBytes),
                             "MaxTh", DoubleValue(g_net.redKBytes + 1),
                             "QW", DoubleValue(1),
                             "LInterm", DoubleValue(1),
                             "Gentle", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "MeanPktSize", UintegerValue(g_net.mss + 52));
    }
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 100000)));

    g_linkStats.resize(2 * g_links.size());
    uint32_t ifaceAddr = 0;
    for (size_t i = 0; i < g_links.size(); i++)
    {
        const Link& l = g_links[i];
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(l.bps)));
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(l.delayNs)));
        // One packet in the device: the queue disc above it holds the queue
        // (and marks it).
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
        NetDeviceContainer d = p2p.Install(g_nodeC.Get(l.a), g_nodeC.Get(l.b));
        int ends[2] = {l.a, l.b};
        for (int k = 0; k < 2; k++)
        {
            int from = ends[k], to = ends[1 - k];
            int dl = (int)(2 * i + k);
            Ptr<NetDevice> dev = d.Get(k);
            if (g_dev.count({from, to}))
                Fail("two links between the same nodes");
            g_dev[{from, to}] = dev;
            g_dirLink[{from, to}] = dl;
            bool sw = from >= g_servers;
            QueueDiscContainer q = (sw ? red : fifo).Install(dev);
            Ptr<QueueDisc> qd = q.Get(0);
            if (sw)
                qd->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnMark, dl));
            qd->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDrop, dl));
            qd->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDequeue, dl));
            qd->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&OnQueue, dl));
            Ptr<Ipv4> ipv4 = g_nodeC.Get(from)->GetObject<Ipv4>();
            uint32_t ifc = ipv4->AddInterface(dev);
            // Interface addresses in 12.0.0.0/8; connections use 10/8.
            ipv4->AddAddress(ifc, Ipv4InterfaceAddress(Addr(0x0c000000, ++ifaceAddr), Ipv4Mask("/32")));
            ipv4->SetUp(ifc);
        }
    }
}

// Route pins traffic to addr along path: a host route at every node but the last.
void
Route(const std::vector<int>& path, Ipv4Address addr)
{
    Ipv4StaticRoutingHelper helper;
    for (size_t k = 0; k + 1 < path.size(); k++)
    {
        auto it = g_dev.find({path[k], path[k + 1]});
        if (it == g_dev.end())
            Fail("path crosses a missing link");
        Ptr<Ipv4> ipv4 = g_nodeC.Get(path[k])->GetObject<Ipv4>();
        int32_t ifc = ipv4->GetInterfaceForDevice(it->second);
        helper.GetStaticRouting(ipv4)->AddHostRouteTo(addr, (uint32_t)ifc);
    }
}

// ---- jobs ----

void StartStep(Job& j);
void TryWrite(Conn& c);
void Tick(Conn* c);
void DcqcnStart(Conn& c);
void DcqcnSend(Conn* c);
void StepDone(Conn* c);

// MltcpFactor is F(ratio) of c: its bytes sent in the iteration (for TCP,
// acknowledged) over its bytes per iteration, clamped to [0, 1].
double
MltcpFactor(const Conn& c)
{
    if (c.iterBytes == 0)
        return g_net.intercept;
    uint64_t done;
    if (g_net.Dcqcn())
        done = c.released; // every byte it sent
    else
    {
        uint32_t queued = g_net.sndBuf - std::min(g_net.sndBuf, c.tx->GetTxAvailable());
        done = c.written - std::min<uint64_t>(c.written, queued);
    }
    double r = done > c.iterBase ? double(done - c.iterBase) / double(c.iterBytes) : 0;
    return g_net.slope * std::min(r, 1.0) + g_net.intercept;
}

void
PrintLine(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

void
PrintLine(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(g_out, fmt, ap);
    va_end(ap);
}

void
BeginIteration(Job* j)
{
    for (auto& c : j->conns)
        c.iterBase = g_net.Dcqcn() ? c.released : c.written;
    j->iterStart = Simulator::Now().GetNanoSeconds();
    j->commStart = -1;
    j->iterMarks = j->iterDrops = 0;
    j->step = 0;
    StartStep(*j);
}

void
EndIteration(Job& j)
{
    int64_t now = Simulator::Now().GetNanoSeconds();
    PrintLine("I %d %d %" PRId64 " %" PRId64 " %" PRId64 " %" PRIu64 " %" PRIu64 "\n", j.id, j.iter,
              j.iterStart, j.commStart, now, j.iterMarks, j.iterDrops);
    j.iter++;
    if (j.iter == j.iterations)
    {
        j.done = true;
        if (--g_left == 0)
            Simulator::Stop();
        return;
    }
    if (!j.agent)
    {
        BeginIteration(&j);
        return;
    }
    // Ask the controller (the Go side runs the job's agent).
    PrintLine("R %d %" PRId64 "\n", j.id, now);
    std::fflush(g_out);
    std::string line;
    if (!std::getline(std::cin, line))
        Fail("controller closed stdin");
    std::istringstream s(line);
    std::string key;
    int64_t start = 0;
    if (!(s >> key >> start) || key != "S" || start < now)
        Fail("bad controller reply: " + line);
    Simulator::Schedule(NanoSeconds(start - now), &BeginIteration, &j);
}

void
NextStep(Job* j)
{
    j->step++;
    StartStep(*j);
}

void
StartStep(Job& j)
{
    for (; j.step < j.steps.size(); j.step++)
    {
        Step& st = j.steps[j.step];
        if (st.computeNs >= 0)
        {
            double f = j.iter < (int)j.noise.size() ? j.noise[j.iter] : 1;
            int64_t ns = (int64_t)std::llround((double)st.computeNs * f);
            if (ns > 0)
            {
                Simulator::Schedule(NanoSeconds(ns), &NextStep, &j);
                return;
            }
            continue;
        }
        if (st.flows.empty())
            continue;
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (j.commStart < 0)
            j.commStart = now;
        j.pending = (int)st.flows.size();
        for (auto& c : j.conns)
        {
            c.active = false;
            c.gates.clear();
            c.gatedBy = nullptr;
        }
        for (auto& f : st.flows)
        {
            Conn& c = j.conns[f.conn];
            c.active = true;
            c.flow = &f;
            c.txBase = c.released;
            c.rxBase = c.received;
            c.stepStartNs = now;
            c.ticks = 0;
            c.stalled = false;
            c.intervalNs = std::max<int64_t>(1, std::llround(g_net.chunk * 8e9 / f.peakBps));
        }
        for (auto& f : st.flows)
        {
            if (f.prev >= 0)
            {
                Conn& c = j.conns[f.conn];
                Conn& p = j.conns[f.prev];
                if (!p.active)
                    Fail("a flow is gated by a connection outside its step");
                c.gatedBy = &p;
                p.gates.push_back(&c);
            }
        }
        for (auto& f : st.flows)
        {
            Conn* c = &j.conns[f.conn];
            if (g_net.Dcqcn())
                DcqcnStart(*c);
            else
                Simulator::ScheduleNow(&Tick, c);
        }
        return;
    }
    EndIteration(j);
}

// Tick releases the next chunk of the connection's step at its peak rate.
// Unless senders may catch up, a chunk the socket has not taken yet stops
// the clock (TryWrite restarts it), so that no backlog builds and the
// connection never sends faster than its peak for longer than its send
// buffer lasts: the fluid model's flow, which sends at min(peak, share).
void
Tick(Conn* c)
{
    if (!c->active)
        return;
    if (!g_net.catchUp && c->written < c->released)
    {
        c->stalled = true;
        return;
    }
    const Flow& f = *c->flow;
    c->ticks++;
    uint64_t rel = std::min<uint64_t>(f.bytes, c->ticks * g_net.chunk);
    c->released = c->txBase + rel;
    TryWrite(*c);
    if (rel < f.bytes)
        Simulator::Schedule(NanoSeconds(c->intervalNs), &Tick, c);
}

void
TryWrite(Conn& c)
{
    if (!c.active)
        return;
    uint64_t allowed = c.released;
    if (c.gatedBy)
    {
        uint64_t got = c.gatedBy->received - c.gatedBy->rxBase;
        allowed = std::min(allowed, c.txBase + got + c.flow->slack);
    }
    while (c.written < allowed)
    {
        uint32_t room = c.tx->GetTxAvailable();
        if (room == 0)
            return; // the send callback calls again
        uint32_t n = (uint32_t)std::min<uint64_t>(allowed - c.written, room);
        int sent = c.tx->Send(Create<Packet>(n));
        if (sent <= 0)
            return;
        c.written += (uint64_t)sent;
    }
    if (c.stalled && c.written == c.released)
    {
        c.stalled = false;
        Simulator::Schedule(NanoSeconds(c.intervalNs), &Tick, &c);
    }
}

void
OnSendSpace(Conn* c, Ptr<Socket>, uint32_t)
{
    TryWrite(*c);
}

void
OnReceive(Conn* c, Ptr<Socket> sock)
{
    Ptr<Packet> p;
    Address from;
    while ((p = sock->RecvFrom(from)))
        c->received += p->GetSize();
    for (Conn* g : c->gates)
        TryWrite(*g);
    StepDone(c);
}

// StepDone ends c's part of its job's step once its receiver has all of it.
void
StepDone(Conn* c)
{
    if (c->active && c->received >= c->rxBase + c->flow->bytes)
    {
        if (c->received > c->rxBase + c->flow->bytes)
            Fail("a connection received more than its step sent");
        c->active = false;
        if (c->sending)
        {
            Simulator::Cancel(c->sendEv);
            c->sending = false;
        }
        Job& j = *c->job;
        if (--j.pending == 0)
        {
            j.step++;
            StartStep(j);
        }
    }
}

// ---- DCQCN ----

// DcqcnRate is what c's sender sends at on the wire: min(Rc, peak), the
// peak being the step's payload rate (the fluid model's), so counted with
// each packet's 28 bytes of IP and UDP headers.
double
DcqcnRate(const Conn& c)
{
    return std::min(c.rc, c.flow->peakBps * (g_net.mtu + 28) / g_net.mtu);
}

void DcqcnAlphaTimer(Conn* c);
void DcqcnRateTimer(Conn* c);

// DcqcnIncrease is a rate increase event of the reaction point.
void
DcqcnIncrease(Conn& c)
{
    if (c.rc >= c.line)
        return;
    double w = g_net.Mltcp() ? MltcpFactor(c) : 1;
    if (std::max(c.iT, c.iB) <= g_net.f)
    {
        // fast recovery
    }
    else if (std::min(c.iT, c.iB) > g_net.f)
        c.rt += double(std::min(c.iT, c.iB) - g_net.f) * w * g_net.rhai;
    else
        c.rt += w * g_net.rai;
    c.rt = std::min(c.rt, c.line);
    c.rc = std::min((c.rt + c.rc) / 2, c.line);
    if (c.line - c.rc <= c.line * std::ldexp(1.0, -20))
        c.rc = c.line;
}

void
DcqcnAlphaTimer(Conn* c)
{
    c->alpha *= 1 - g_net.g;
    c->alphaEv = Simulator::Schedule(NanoSeconds(g_net.alphaNs), &DcqcnAlphaTimer, c);
}

void
DcqcnRateTimer(Conn* c)
{
    c->iT++;
    DcqcnIncrease(*c);
    if (c->rc < c->line)
        c->rateEv = Simulator::Schedule(NanoSeconds(g_net.rateNs), &DcqcnRateTimer, c);
}

// DcqcnCnp is the reaction point's cut on a CNP.
void
DcqcnCnp(Conn* c)
{
    if (!c->active)
        return;
    c->cnps++;
    if (!c->cnped)
    {
        c->cnped = true;
        c->alpha = g_net.initAlpha;
    }
    c->rt = c->rc;
    c->rc = std::max(c->rc * (1 - c->alpha / 2), std::min(g_net.minRate, c->line));
    c->alpha = (1 - g_net.g) * c->alpha + g_net.g;
    c->iT = c->iB = 0;
    c->byteAcc = 0;
    Simulator::Cancel(c->alphaEv);
    Simulator::Cancel(c->rateEv);
    c->alphaEv = Simulator::Schedule(NanoSeconds(g_net.alphaNs), &DcqcnAlphaTimer, c);
    c->rateEv = Simulator::Schedule(NanoSeconds(g_net.rateNs), &DcqcnRateTimer, c);
}

void
OnCnp(Conn* c, Ptr<Socket> sock)
{
    Ptr<Packet> p;
    Address from;
    while ((p = sock->RecvFrom(from)))
        DcqcnCnp(c);
}

// DcqcnStart starts c's part of a step: a fresh sender at line rate.
void
DcqcnStart(Conn& c)
{
    Simulator::Cancel(c.alphaEv);
    Simulator::Cancel(c.rateEv);
    c.rc = c.rt = c.line;
    c.alpha = g_net.initAlpha;
    c.cnped = false;
    c.iT = c.iB = 0;
    c.byteAcc = 0;
    c.resend = 0;
    c.stepSent = 0;
    c.markPending = false;
    if (!c.sending)
    {
        c.sending = true;
        c.sendEv = Simulator::ScheduleNow(&DcqcnSend, &c);
    }
}

// DcqcnSend sends c's next packet, paced at min(Rc, peak), as far as its
// step's bytes (and a dropped packet's), and for a gated ring hop the
// bytes its predecessor received, allow.
void
DcqcnSend(Conn* c)
{
    c->sending = false;
    if (!c->active)
        return;
    const Flow& f = *c->flow;
    uint64_t allowed = f.bytes + c->resend;
    if (c->gatedBy)
    {
        uint64_t got = c->gatedBy->received - c->gatedBy->rxBase;
        allowed = std::min(allowed, got + f.slack + c->resend);
    }
    if (c->stepSent >= allowed)
    {
        c->stalled = true; // the predecessor's OnDcqcnData restarts it
        return;
    }
    c->stalled = false;
    uint32_t n = (uint32_t)std::min<uint64_t>(allowed - c->stepSent, g_net.mtu);
    // ns-3.37's UDP socket takes the TOS byte from the address it sends
    // to: ECT(0), so that switches mark rather than drop.
    InetSocketAddress to(c->daddr, c->port);
    to.SetTos(0x02);
    int sent = c->tx->SendTo(Create<Packet>(n), 0, to);
    if (sent > 0)
    {
        c->stepSent += (uint64_t)sent;
        c->released += (uint64_t)sent;
        c->byteAcc += sent;
        while (c->byteAcc >= g_net.byteCounter)
        {
            c->byteAcc -= g_net.byteCounter;
            if (c->cnped)
            {
                c->iB++;
                DcqcnIncrease(*c);
            }
        }
    }
    // The wire carries the payload and 28 bytes of IP and UDP headers.
    double ns = double(n + 28) * 8e9 / DcqcnRate(*c);
    c->sending = true;
    c->sendEv = Simulator::Schedule(NanoSeconds(std::max<int64_t>(1, std::llround(ns))), &DcqcnSend, c);
}

void SendCnp(Conn* c);

// OnDcqcnData is the receiver: it counts the bytes, and on a marked packet
// sends a CNP at once if the CNP interval has passed since the last one,
// else when it will have.
void
OnDcqcnData(Conn* c, Ptr<Socket> sock)
{
    Ptr<Packet> p;
    Address from;
    int64_t now = Simulator::Now().GetNanoSeconds();
    while ((p = sock->RecvFrom(from)))
    {
        c->received += p->GetSize();
        SocketIpTosTag tos;
        if (p->PeekPacketTag(tos) && (tos.GetTos() & 3) == 3 && c->active)
        {
            if (now - c->lastCnpNs >= g_net.cnpNs)
                SendCnp(c);
            else if (!c->cnpScheduled)
            {
                c->markPending = true;
                c->cnpScheduled = true;
                Simulator::Schedule(NanoSeconds(c->lastCnpNs + g_net.cnpNs - now), &SendCnp, c);
            }
        }
    }
    for (Conn* g : c->gates)
        if (g->stalled && !g->sending)
        {
            g->sending = true;
            g->sendEv = Simulator::ScheduleNow(&DcqcnSend, g);
        }
    StepDone(c);
}

void
SendCnp(Conn* c)
{
    bool scheduled = c->cnpScheduled;
    c->cnpScheduled = false;
    if (scheduled && !c->markPending)
        return;
    c->markPending = false;
    c->lastCnpNs = Simulator::Now().GetNanoSeconds();
    InetSocketAddress to(c->saddr, c->port + 1);
    to.SetTos(0x02);
    c->cnpTx->SendTo(Create<Packet>(16), 0, to);
}


bool
OnAcceptRequest(Ptr<Socket>, const Address&)
{
    return true;
}

void
OnAccepted(Conn* c, Ptr<Socket> s, const Address&)
{
    c->rx = s;
    s->SetRecvCallback(MakeBoundCallback(&OnReceive, c));
}

void
OnConnected(Ptr<Socket>)
{
}

void
OnConnectFailed(Ptr<Socket>)
{
    Fail("a connection failed to open");
}

void
SetupJobs()
{
    TypeId tcp = TcpSocketFactory::GetTypeId();
    TypeId udp = UdpSocketFactory::GetTypeId();
    uint32_t k = 0;
    for (auto& j : g_jobs)
    {
        for (auto& c : j.conns)
        {
            c.job = &j;
            // A /30 per connection: ns-3 sets a connecting socket's source
            // to the address the route picks, the one on the interface in
            // the destination's subnet.
            c.saddr = Addr(0x0a000000, 4 * k + 1);
            c.daddr = Addr(0x0a000000, 4 * k + 2);
            k++;
            c.port = 5000;
            g_bySender[c.saddr.Get()] = &c;
            g_byReceiver[c.daddr.Get()] = &c;
            for (auto [node, addr] : {std::pair{c.src, c.saddr}, std::pair{c.dst, c.daddr}})
            {
                Ptr<Ipv4> ipv4 = g_nodeC.Get(node)->GetObject<Ipv4>();
                // A server has one link; its connections' addresses live there.
                const std::vector<int>& p = node == c.src ? c.path : c.back;
                int32_t ifc = ipv4->GetInterfaceForDevice(g_dev.at({p[0], p[1]}));
                ipv4->AddAddress((uint32_t)ifc, Ipv4InterfaceAddress(addr, Ipv4Mask("/30")));
            }
            Route(c.path, c.daddr);
            Route(c.back, c.saddr);
            // The sender's NIC: the link its path starts on.
            for (auto& l : g_links)
                if ((l.a == c.path[0] && l.b == c.path[1]) || (l.b == c.path[0] && l.a == c.path[1]))
                    c.line = double(l.bps);
            if (g_net.Dcqcn())
            {
                Conn* cp = &c;
                c.rx = Socket::CreateSocket(g_nodeC.Get(c.dst), udp);
                c.rx->Bind(InetSocketAddress(c.daddr, c.port));
                c.rx->SetIpRecvTos(true);
                c.rx->SetRecvCallback(MakeBoundCallback(&OnDcqcnData, cp));
                c.tx = Socket::CreateSocket(g_nodeC.Get(c.src), udp);
                c.tx->Bind(InetSocketAddress(c.saddr, c.port));
                c.tx->Connect(InetSocketAddress(c.daddr, c.port));
                c.cnpRx = Socket::CreateSocket(g_nodeC.Get(c.src), udp);
                c.cnpRx->Bind(InetSocketAddress(c.saddr, c.port + 1));
                c.cnpRx->SetRecvCallback(MakeBoundCallback(&OnCnp, cp));
                c.cnpTx = Socket::CreateSocket(g_nodeC.Get(c.dst), udp);
                c.cnpTx->Bind(InetSocketAddress(c.daddr, c.port + 1));
                c.cnpTx->Connect(InetSocketAddress(c.saddr, c.port + 1));
                continue;
            }

            Ptr<Socket> listen = Socket::CreateSocket(g_nodeC.Get(c.dst), tcp);
            listen->Bind(InetSocketAddress(c.daddr, c.port));
            listen->Listen();
            listen->SetAcceptCallback(MakeCallback(&OnAcceptRequest), MakeBoundCallback(&OnAccepted, &c));

            c.tx = Socket::CreateSocket(g_nodeC.Get(c.src), tcp);
            if (g_net.cc == "mltcp-reno")
            {
                Ptr<TcpMltcpReno> ops = CreateObject<TcpMltcpReno>();
                ops->conn = &c;
                DynamicCast<TcpSocketBase>(c.tx)->SetCongestionControlAlgorithm(ops);
            }
            c.tx->Bind(InetSocketAddress(c.saddr, 0));
            c.tx->SetConnectCallback(MakeCallback(&OnConnected), MakeCallback(&OnConnectFailed));
            c.tx->SetSendCallback(MakeBoundCallback(&OnSendSpace, &c));
            // Connect once the nodes are initialized (at time 0, before
            // any job starts): the traffic-control layer scans its devices then.
            Conn* cp = &c;
            Simulator::ScheduleNow([cp]() { cp->tx->Connect(InetSocketAddress(cp->daddr, cp->port)); });
        }
        g_left++;
        Simulator::Schedule(NanoSeconds(j.startNs), &BeginIteration, &j);
    }
}

void
Configure()
{
    if (g_net.cc == "dctcp")
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    else if (g_net.cc == "cubic")
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    else if (g_net.cc == "newreno" || g_net.cc == "mltcp-reno")
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    else if (!g_net.Dcqcn())
        Fail("unknown congestion control " + g_net.cc);
    // DCTCP turns ECN on by itself; the others negotiate classic ECN.
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(g_net.mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(g_net.sndBuf));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(g_net.delAck));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(g_net.delAckTimeoutNs)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(g_net.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(g_net.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(g_net.minRtoNs)));
    RngSeedManager::SetSeed(g_net.seed);
}

void
PrintSummary(double wall)
{
    for (size_t i = 0; i < g_links.size(); i++)
    {
        for (int k = 0; k < 2; k++)
        {
            const LinkStats& s = g_linkStats[2 * i + k];
            int from = k == 0 ? g_links[i].a : g_links[i].b;
            int to = k == 0 ? g_links[i].b : g_links[i].a;
            PrintLine("L %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", from, to,
                      s.packets, s.marks, s.ackMarks, s.drops, s.ackDrops, s.maxQueue);
        }
    }
    for (auto& j : g_jobs)
        PrintLine("J %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", j.id, j.iter, j.marks, j.drops, j.ackDrops);
    PrintLine("E %" PRId64 " %" PRIu64 " %.3f\n", Simulator::Now().GetNanoSeconds(), Simulator::GetEventCount(),
              wall);
}

} // namespace

int
main(int argc, char* argv[])
{
    if (argc != 2)
        Fail("usage: orrery-ns3 SCENARIO-FILE (agent replies on stdin)");
    std::ifstream in(argv[1]);
    if (!in)
        Fail(std::string("cannot open ") + argv[1]);
    ReadScenario(in);
    Configure();
    BuildNetwork();
    SetupJobs();
    if (g_net.stopNs > 0)
        Simulator::Stop(NanoSeconds(g_net.stopNs));
    std::fprintf(g_out, "orrery-ns3-out 1\n");
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    PrintSummary(wall);
    std::fflush(g_out);
    Simulator::Destroy();
    return 0;
}

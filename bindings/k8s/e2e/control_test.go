//go:build linux

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// binEnv names the directory holding etcd, kube-apiserver, kube-scheduler
// and orrery-scheduler (make k8s-e2e sets it).
const binEnv = "ORRERY_K8S_E2E_BIN"

// plane is a control plane the test started: etcd and kube-apiserver on
// 127.0.0.1, in a temporary directory removed at the end.
type plane struct {
	t     testing.TB
	bin   string // binaries
	dir   string // certificates, kubeconfigs, logs, etcd's data
	host  string // https://127.0.0.1:port
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	admin *rest.Config
	cs    *kubernetes.Clientset
	procs []*proc
}

// proc is a process the test started.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // of Wait, once done
	// stopped says the test ended it (or is ending it): its exit is no
	// failure.
	stopped bool
}

// startPlane starts etcd and kube-apiserver and waits until the API server
// is ready; everything is stopped and removed when the test ends, failed
// or not.
func startPlane(t *testing.T) *plane {
	bin := os.Getenv(binEnv)
	if bin == "" {
		t.Skipf("%s is not set: run make k8s-e2e", binEnv)
	}
	dir, err := os.MkdirTemp("", "orrery-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	p := &plane{t: t, bin: bin, dir: dir}
	t.Cleanup(p.stop)
	p.certs()

	etcdPort, peerPort := freePort(t), freePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	p.start("etcd", "etcd", "--name=e2e", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	p.waitHTTP("etcd", etcdURL+"/health", http.DefaultClient, 60*time.Second)

	port := freePort(t)
	p.host = fmt.Sprintf("https://127.0.0.1:%d", port)
	f := func(name string) string { return filepath.Join(dir, name) }
	p.start("kube-apiserver", "kube-apiserver",
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port), "--cert-dir="+f("apiserver"),
		"--tls-cert-file="+f("apiserver.crt"), "--tls-private-key-file="+f("apiserver.key"),
		"--client-ca-file="+f("ca.crt"),
		// The front proxy's CA, which the schedulers' delegated
		// authentication reads (without it they log an error a second).
		"--requestheader-client-ca-file="+f("ca.crt"), "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+f("sa.key"), "--service-account-signing-key-file="+f("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/24", "--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		// No controller manager creates the namespaces' default
		// ServiceAccount, which the ServiceAccount admission plugin wants.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false")
	p.admin = p.config("admin.crt", "admin.key")
	p.cs = kubernetes.NewForConfigOrDie(p.admin)
	rc, err := rest.HTTPClientFor(p.admin)
	if err != nil {
		t.Fatal(err)
	}
	p.waitHTTP("kube-apiserver", p.host+"/readyz", rc, 120*time.Second)
	ctx := context.Background()
	p.waitFor("namespace kube-system", 60*time.Second, func() bool {
		_, err := p.cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		return err == nil
	})
	return p
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs the binary with args, its output in a log file in the
// temporary directory. The process is killed if the test process dies.
func (p *plane) start(name, binary string, args ...string) *proc {
	p.t.Helper()
	log := filepath.Join(p.dir, fmt.Sprintf("%s-%d.log", name, len(p.procs)))
	out, err := os.Create(log)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(p.bin, binary), args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		p.t.Fatalf("starting %s: %v", name, err)
	}
	pr := &proc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		pr.err = cmd.Wait()
		out.Close()
		close(pr.done)
	}()
	p.procs = append(p.procs, pr)
	return pr
}

// kill ends the process with sig, then SIGKILL after 10 s, and waits.
func (pr *proc) kill(sig syscall.Signal) {
	pr.stopped = true
	select {
	case <-pr.done:
		return
	default:
	}
	_ = pr.cmd.Process.Signal(sig)
	select {
	case <-pr.done:
	case <-time.After(10 * time.Second):
		_ = pr.cmd.Process.Kill()
		<-pr.done
	}
}

// running reports whether the process has not exited.
func (pr *proc) running() bool {
	select {
	case <-pr.done:
		return false
	default:
		return true
	}
}

// stop ends every process, newest first, and removes the directory. On a
// failed test it first prints the end of every log.
func (p *plane) stop() {
	for i := len(p.procs) - 1; i >= 0; i-- {
		p.procs[i].kill(syscall.SIGTERM)
	}
	if dir := os.Getenv("ORRERY_E2E_KEEP_LOGS"); dir != "" {
		for _, pr := range p.procs {
			if b, err := os.ReadFile(pr.log); err == nil {
				_ = os.WriteFile(filepath.Join(dir, filepath.Base(pr.log)), b, 0o644)
			}
		}
	}
	if p.t.Failed() {
		for _, pr := range p.procs {
			p.t.Logf("--- last lines of %s (%s, exit %v):\n%s", pr.name, filepath.Base(pr.log), pr.err, tail(pr.log, 40))
		}
	}
	if err := os.RemoveAll(p.dir); err != nil {
		p.t.Errorf("removing %s: %v", p.dir, err)
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitHTTP polls url until it answers 200, failing the test after d, or
// when a process the test started has exited.
func (p *plane) waitHTTP(what, url string, c *http.Client, d time.Duration) {
	p.t.Helper()
	p.waitFor(what, d, func() bool {
		resp, err := c.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// waitFor polls cond every 50 ms for up to d; a process that exited fails
// the test at once.
func (p *plane) waitFor(what string, d time.Duration, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return
		}
		for _, pr := range p.procs {
			if !pr.stopped && !pr.running() {
				p.t.Fatalf("waiting for %s: %s exited: %v\n%s", what, pr.name, pr.err, tail(pr.log, 40))
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s: not after %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// certs writes a CA, the API server's serving certificate for 127.0.0.1,
// client certificates for the test (group system:masters) and for the
// default scheduler (user system:kube-scheduler, bound by the API server's
// bootstrap roles), and the service-account signing key.
func (p *plane) certs() {
	p.t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			p.t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	p.caKey = key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orrery-e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		p.t.Fatal(err)
	}
	p.writePEM("ca.crt", "CERTIFICATE", der)
	serial := int64(2)
	issue := func(name string, subject pkix.Name, usage x509.ExtKeyUsage, ips []net.IP, dns []string) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: ips, DNSNames: dns}
		serial++
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
		if err != nil {
			p.t.Fatal(err)
		}
		p.writePEM(name+".crt", "CERTIFICATE", der)
		p.writeKey(name+".key", k)
	}
	issue("apiserver", pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth,
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}, []string{"localhost", "kubernetes", "kubernetes.default"})
	issue("admin", pkix.Name{CommonName: "orrery-e2e", Organization: []string{"system:masters"}}, x509.ExtKeyUsageClientAuth, nil, nil)
	issue("kube-scheduler", pkix.Name{CommonName: "system:kube-scheduler"}, x509.ExtKeyUsageClientAuth, nil, nil)
	p.writeKey("sa.key", key())
}

func (p *plane) writePEM(name, typ string, der []byte) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		p.t.Fatal(err)
	}
}

func (p *plane) writeKey(name string, k *ecdsa.PrivateKey) {
	p.t.Helper()
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		p.t.Fatal(err)
	}
	p.writePEM(name, "EC PRIVATE KEY", der)
}

func (p *plane) read(name string) []byte {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, name))
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// config is a client configuration with a client certificate.
func (p *plane) config(cert, key string) *rest.Config {
	return &rest.Config{Host: p.host, QPS: 500, Burst: 1000,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.read("ca.crt"), CertData: p.read(cert), KeyData: p.read(key)}}
}

// kubeconfig writes a kubeconfig for a client certificate (cert, key) or a
// bearer token, and returns its path.
func (p *plane) kubeconfig(name, cert, key, token string) string {
	p.t.Helper()
	ai := &clientcmdapi.AuthInfo{Token: token}
	if cert != "" {
		ai.ClientCertificateData, ai.ClientKeyData = p.read(cert), p.read(key)
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"e2e": {Server: p.host, CertificateAuthorityData: p.read("ca.crt")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{name: ai},
		Contexts:       map[string]*clientcmdapi.Context{"e2e": {Cluster: "e2e", AuthInfo: name}},
		CurrentContext: "e2e",
	}
	path := filepath.Join(p.dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// write writes a file in the temporary directory and returns its path.
func (p *plane) write(name string, data []byte) string {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

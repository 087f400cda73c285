// Package cassini is a kube-scheduler plugin that places training jobs
// network-aware: CASSINI (NSDI '24) inside the scheduling framework, backed
// by orrery's ranker (engine/cassini/candidate).
//
// # Model
//
// The fabric comes from node labels: each node's NIC (Args.NodeGbps, or the
// node's NICLabel), then one or more tiers of switches bottom up
// (Args.Tiers: a rack label for the leaf switches, optionally a block label
// for three-tier fabrics), each domain's uplink bundle as one link whose
// capacity is its members' downlink capacity over the tier's
// oversubscription. A training job is the pods sharing the job label (or a
// PodGroup); its traffic profile is a pod annotation (or a ConfigMap) in the
// JSON of a cassini.rank job; its pods run a ring all-reduce in locality
// order, loading every link the ring crosses with the job's profile.
//
// # Extension points
//
//   - PreScore builds the candidate placements of the pod's job (its pods
//     already placed plus the rest, pre-selected by topology among the
//     feasible nodes: Args.Candidates, most compact first), with the
//     running jobs that share links with any of them, and ranks them once
//     for the cycle within Args.TimeBudget.
//   - Score is a map lookup into PreScore's ranking: a node scores as the
//     best candidate that puts a pod on it, the best candidate's nodes 100
//     and each next candidate strictly lower (equal compatibility keeps the
//     pre-selection's topology order), at most as high as its compatibility
//     puts it.
//   - Reserve records the pod's node and the shifts of the candidate it
//     followed, for every job in that candidate's affinity graph (ranking
//     the pod's placement itself where the framework ran no PreScore: a
//     single feasible node); Unreserve undoes it.
//   - A plan writer, off the binding's critical path, writes each job's
//     plan (package plan) in its pods' annotation for the agent, on every
//     pod Reserve placed (bound or being bound) and every pod the informer
//     shows bound, and rewrites the plans of running jobs whose shift
//     changed; a failed write is retried with backoff. Plan generations
//     grow on every pod: a restarted scheduler continues from the highest
//     generation it finds and leaves unchanged plans as they are.
//   - ScorePlacement and NormalizePlacementScore rank whole pod groups:
//     with Kubernetes' GenericWorkload and TopologyAwareWorkloadScheduling
//     feature gates, the scheduler tries each placement a placement
//     generator proposes for a PodGroup, and the plugin ranks the resulting
//     assignments of all the group's pods in one call.
//
// A pod that is not part of a training job, whose job has no usable
// profile, or whose ranking runs past the budget gets Skip from PreScore:
// the framework scores it without the plugin. A bad job size or profile
// gets a Warning event on the pod, and a bad NIC label one on the node,
// naming the annotation (label) and the field. Nothing the plugin does
// fails a scheduling cycle.
package cassini

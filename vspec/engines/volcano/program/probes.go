package main

// Probes: a spec's unit-test questions (spec format, "Probes") asked of a session that
// is opened on the cluster as given and runs no action. The answers are raw (error
// texts, scores, verdicts, lists): vspec compares them with the spec's expectations,
// with the same code for both engines.

import (
	"fmt"
	"math"
	"sort"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/util"
)

// ProbeQuery is one probe: the keys a spec's probe sets, with the nodes, tasks or
// items it names, and no expected values.
type ProbeQuery struct {
	Task string `json:"task,omitempty"`
	// Predicates are the nodes PredicateFn is asked about for Task.
	Predicates []string `json:"predicates,omitempty"`
	// Scores are the nodes allocate's scoring ranks for Task; Best also asks which of
	// them allocate would choose.
	Scores []string `json:"scores,omitempty"`
	Best   bool     `json:"best,omitempty"`
	// PluginScores names, per plugin, the nodes whose score from that plugin is asked.
	PluginScores map[string][]string `json:"pluginScores,omitempty"`

	Job string `json:"job,omitempty"`
	// Votes are the job functions asked: enqueueable, ready, pipelined, starving, valid.
	Votes []string `json:"votes,omitempty"`

	// Preemptor or Reclaimer asks Preemptable or Reclaimable about Candidates.
	Preemptor  string   `json:"preemptor,omitempty"`
	Reclaimer  string   `json:"reclaimer,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
	// VictimTasks asks VictimTasks about these tasks.
	VictimTasks []string `json:"victimTasks,omitempty"`

	// Order (jobs, tasks, queues, namespaces) sorts Items by the session's order.
	Order string   `json:"order,omitempty"`
	Items []string `json:"items,omitempty"`
}

// ProbeAnswer holds what the session answered; Missing is set instead when the probe
// names a pod, pod group, node or queue the session cannot find.
type ProbeAnswer struct {
	Missing string `json:"missing,omitempty"`
	// Predicates maps each node to PredicateFn's error text, null when it passes.
	Predicates map[string]*string `json:"predicates,omitempty"`
	// Scores and PluginScores are null for a score that is not a finite number.
	Scores       map[string]*float64            `json:"scores,omitempty"`
	PluginScores map[string]map[string]*float64 `json:"pluginScores,omitempty"`
	// Best are the nodes allocate chooses among: BestNodeFn's one node, or every node
	// that ties for the highest score, among which Volcano draws at random.
	Best    []string        `json:"best,omitempty"`
	Votes   map[string]bool `json:"votes,omitempty"`
	Valid   *Validity       `json:"valid,omitempty"`
	Victims []string        `json:"victims"`
	Order   []string        `json:"order"`
}

// Validity is JobValid's verdict; Message is "reason: message" when it fails.
type Validity struct {
	Pass    bool   `json:"pass"`
	Message string `json:"message"`
}

// missing is a probe naming something the session does not hold.
type missing struct{ what string }

func (m missing) Error() string { return m.what }

// probeSession opens a session on the request's cluster, asks it every probe, and
// closes it: a quiet session of its own, whose effects are dropped with its cache.
func probeSession(req *Request, logs *capture, setVerbosity func(int)) (*Response, error) {
	p, err := prepare(req, logs, setVerbosity)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	conf.EnabledActionMap = make(map[string]bool, len(p.actions))
	for _, action := range p.actions {
		conf.EnabledActionMap[action.Name()] = true
	}
	ssn := framework.OpenSession(recordingCache{p.sc, p.fx, p.client}, p.tiers, p.configurations)
	asker := &prober{ssn: ssn, p: p}
	answers := make([]ProbeAnswer, 0, len(req.Probes))
	for _, query := range req.Probes {
		answer := ProbeAnswer{}
		if err := asker.answer(query, &answer); err != nil {
			answer = ProbeAnswer{Missing: err.Error()}
		}
		answers = append(answers, answer)
	}
	framework.CloseSession(ssn)
	logs.take()
	return &Response{ID: req.ID, Probes: answers, Warnings: p.warnings}, nil
}

type prober struct {
	ssn *framework.Session
	p   *prepared
}

func (a *prober) answer(q ProbeQuery, out *ProbeAnswer) error {
	switch {
	case q.Task != "":
		return a.task(q, out)
	case q.Job != "":
		return a.job(q, out)
	case q.Preemptor != "" || q.Reclaimer != "":
		return a.victims(q, out)
	case q.VictimTasks != nil:
		tasks, err := a.tasks(q.VictimTasks)
		if err != nil {
			return err
		}
		out.Victims = []string{}
		for task := range a.ssn.VictimTasks(tasks) {
			out.Victims = append(out.Victims, taskKey(task))
		}
		sort.Strings(out.Victims)
		return nil
	case q.Order != "":
		return a.order(q, out)
	}
	return fmt.Errorf("a probe with none of task, job, preemptor, reclaimer, victimTasks, order")
}

// findTask is the session's task of that pod, or one built from the pod as the
// snapshot would, when its job is not in the session.
func (a *prober) findTask(key string) (*api.TaskInfo, error) {
	for _, job := range a.ssn.Jobs {
		for _, task := range job.Tasks {
			if taskKey(task) == key {
				return task, nil
			}
		}
	}
	for _, pod := range a.p.objects.pods {
		if pod.Namespace+"/"+pod.Name == key {
			return api.NewTaskInfo(pod), nil
		}
	}
	return nil, missing{fmt.Sprintf("no pod %q in the cluster", key)}
}

func (a *prober) tasks(keys []string) ([]*api.TaskInfo, error) {
	tasks := make([]*api.TaskInfo, 0, len(keys))
	for _, key := range keys {
		task, err := a.findTask(key)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, task)
	}
	return tasks, nil
}

// findJob is the session's job, or the cache's when the snapshot left it out (its
// queue is missing, for one).
func (a *prober) findJob(key string) (*api.JobInfo, error) {
	if job, found := a.ssn.Jobs[api.JobID(key)]; found {
		return job, nil
	}
	if job, found := a.p.sc.Jobs[api.JobID(key)]; found && job.PodGroup != nil {
		return job.Clone(), nil
	}
	return nil, missing{fmt.Sprintf("no pod group %q in the cluster", key)}
}

func (a *prober) nodes(names []string) ([]*api.NodeInfo, error) {
	nodes := make([]*api.NodeInfo, 0, len(names))
	for _, name := range names {
		node, found := a.ssn.Nodes[name]
		if !found {
			return nil, missing{fmt.Sprintf("no node %q in the session", name)}
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func (a *prober) task(q ProbeQuery, out *ProbeAnswer) error {
	task, err := a.findTask(q.Task)
	if err != nil {
		return err
	}
	if q.Predicates != nil {
		nodes, err := a.nodes(q.Predicates)
		if err != nil {
			return err
		}
		// Allocate runs PrePredicate before the predicates; its error stands for every node.
		preErr := a.ssn.PrePredicateFn(task)
		out.Predicates = map[string]*string{}
		for _, node := range nodes {
			err := preErr
			if err == nil {
				err = a.ssn.PredicateFn(task, node)
			}
			if err != nil {
				text := err.Error()
				out.Predicates[node.Name] = &text
			} else {
				out.Predicates[node.Name] = nil
			}
		}
	}
	if q.Scores != nil || q.Best {
		nodes, err := a.nodes(q.Scores)
		if err != nil {
			return err
		}
		byScore := a.prioritize(task, nodes)
		out.Scores = totals(byScore)
		if q.Best {
			out.Best = a.best(task, byScore)
		}
	}
	if q.PluginScores != nil {
		out.PluginScores = map[string]map[string]*float64{}
		for plugin, names := range q.PluginScores {
			nodes, err := a.nodes(names)
			if err != nil {
				return err
			}
			out.PluginScores[plugin] = a.pluginScores(plugin, task, nodes)
		}
	}
	return nil
}

// prioritize scores nodes as allocate does.
func (a *prober) prioritize(task *api.TaskInfo, nodes []*api.NodeInfo) map[float64][]*api.NodeInfo {
	ssn := a.ssn
	return util.PrioritizeNodes(task, nodes, ssn.BatchNodeOrderFn, ssn.NodeOrderMapFn, ssn.NodeOrderReduceFn)
}

func totals(byScore map[float64][]*api.NodeInfo) map[string]*float64 {
	scores := map[string]*float64{}
	for score, nodes := range byScore {
		for _, node := range nodes {
			scores[node.Name] = finite(score)
		}
	}
	return scores
}

// best is allocate's choice: BestNodeFn's node, else the nodes of the highest score,
// among which util.SelectBestNode draws at random.
func (a *prober) best(task *api.TaskInfo, byScore map[float64][]*api.NodeInfo) []string {
	if node := a.ssn.BestNodeFn(task, byScore); node != nil {
		return []string{node.Name}
	}
	top, names := math.Inf(-1), []string{}
	for score, nodes := range byScore {
		if score > top {
			top, names = score, nil
			for _, node := range nodes {
				names = append(names, node.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// pluginScores is one plugin's part of allocate's scores: the session's own scoring
// with every other tier entry's node order switched off, so a plugin listed twice
// counts twice and one whose enableNodeOrder is off counts nothing.
func (a *prober) pluginScores(plugin string, task *api.TaskInfo, nodes []*api.NodeInfo) map[string]*float64 {
	kept := a.ssn.Tiers
	off := false
	masked := make([]conf.Tier, len(kept))
	for i, tier := range kept {
		masked[i].Plugins = make([]conf.PluginOption, len(tier.Plugins))
		for j, option := range tier.Plugins {
			if option.Name != plugin {
				option.EnabledNodeOrder = &off
			}
			masked[i].Plugins[j] = option
		}
	}
	a.ssn.Tiers = masked
	defer func() { a.ssn.Tiers = kept }()
	scores := totals(a.prioritize(task, nodes))
	for _, node := range nodes {
		if _, found := scores[node.Name]; !found {
			scores[node.Name] = finite(0)
		}
	}
	return scores
}

func (a *prober) job(q ProbeQuery, out *ProbeAnswer) error {
	job, err := a.findJob(q.Job)
	if err != nil {
		return err
	}
	out.Votes = map[string]bool{}
	for _, vote := range q.Votes {
		switch vote {
		case "enqueueable":
			out.Votes[vote] = a.ssn.JobEnqueueable(job)
		case "ready":
			out.Votes[vote] = a.ssn.JobReady(job)
		case "pipelined":
			out.Votes[vote] = a.ssn.JobPipelined(job)
		case "starving":
			out.Votes[vote] = a.ssn.JobStarving(job)
		case "valid":
			out.Valid = &Validity{Pass: true}
			if result := a.ssn.JobValid(job); result != nil && !result.Pass {
				out.Valid = &Validity{Message: result.Reason + ": " + result.Message}
			}
		default:
			return fmt.Errorf("no job function %q", vote)
		}
	}
	return nil
}

func (a *prober) victims(q ProbeQuery, out *ProbeAnswer) error {
	asker, name := a.ssn.Preemptable, q.Preemptor
	if q.Reclaimer != "" {
		asker, name = a.ssn.Reclaimable, q.Reclaimer
	}
	task, err := a.findTask(name)
	if err != nil {
		return err
	}
	candidates, err := a.tasks(q.Candidates)
	if err != nil {
		return err
	}
	out.Victims = []string{}
	for _, victim := range asker(task, candidates) {
		out.Victims = append(out.Victims, taskKey(victim))
	}
	sort.Strings(out.Victims)
	return nil
}

func (a *prober) order(q ProbeQuery, out *ProbeAnswer) error {
	out.Order = append([]string{}, q.Items...)
	var less func(l, r interface{}) bool
	items := make([]interface{}, len(q.Items))
	for i, key := range q.Items {
		var item interface{}
		var err error
		switch q.Order {
		case "jobs":
			less = a.ssn.JobOrderFn
			item, err = a.findJob(key)
		case "tasks":
			less = a.ssn.TaskOrderFn
			item, err = a.findTask(key)
		case "queues":
			less = a.ssn.QueueOrderFn
			queue, found := a.ssn.Queues[api.QueueID(key)]
			if !found {
				err = missing{fmt.Sprintf("no queue %q in the session", key)}
			}
			item = queue
		case "namespaces":
			// Volcano's session has no namespace order function: the items keep
			// their given order.
			return nil
		default:
			return fmt.Errorf("no order %q", q.Order)
		}
		if err != nil {
			return err
		}
		items[i] = item
	}
	index := make([]int, len(items))
	for i := range index {
		index[i] = i
	}
	if less != nil {
		sort.SliceStable(index, func(i, j int) bool { return less(items[index[i]], items[index[j]]) })
	}
	for i, k := range index {
		out.Order[i] = q.Items[k]
	}
	return nil
}

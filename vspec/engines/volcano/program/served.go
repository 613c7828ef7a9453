package main

import (
	"context"
	"fmt"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// vgpuClient is the API client of Volcano's vgpu package. That package builds it from a
// kubeconfig when the process starts (in a cluster, the scheduler's own), and patches
// node annotations through it while reading a node; here it is the session's client.
//
//go:linkname vgpuClient volcano.sh/volcano/pkg/scheduler/api/devices/nvidia/vgpu.kubeClient
var vgpuClient kubernetes.Interface

// served holds the nodes and pods the session's API client serves.
type served struct {
	nodes []*v1.Node
	pods  []*v1.Pod
}

func (s *served) client() (kubernetes.Interface, error) {
	client := fake.NewSimpleClientset()
	ctx, create := context.Background(), metav1.CreateOptions{}
	for _, node := range s.nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, node.DeepCopy(), create); err != nil {
			return nil, errorOf{"object", fmt.Errorf("node %s: %v", node.Name, err)}
		}
	}
	for _, pod := range s.pods {
		if _, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod.DeepCopy(), create); err != nil {
			return nil, errorOf{"object", fmt.Errorf("pod %s/%s: %v", pod.Namespace, pod.Name, err)}
		}
	}
	vgpuClient = client
	return client, nil
}

// patched returns, per pod, the annotations the session added or changed through the
// client: the next session's cluster carries them, as the API server would.
func (s *served) patched(client kubernetes.Interface) map[string]map[string]string {
	out := map[string]map[string]string{}
	ctx := context.Background()
	for _, pod := range s.pods {
		now, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		for key, value := range now.Annotations {
			if old, found := pod.Annotations[key]; !found || old != value {
				if out[pod.Namespace+"/"+pod.Name] == nil {
					out[pod.Namespace+"/"+pod.Name] = map[string]string{}
				}
				out[pod.Namespace+"/"+pod.Name][key] = value
			}
		}
	}
	return out
}

"""The Kubernetes scheduler pieces Volcano calls (filters, scores, node info, QoS), as
Volcano vendors them from ``k8s.io/kubernetes/pkg/scheduler``.

May import api, model and the leaves.
"""

"""The Kubernetes scheduler pieces Volcano calls (filters, scores, node info)."""

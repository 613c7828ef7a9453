"""What the actions share, as in Volcano's ``pkg/scheduler/util`` (the priority queue,
node scoring and selection, the predicate helper, the node memo), and the garbage
collector settings vspec runs under (:mod:`vspec.util.collector`).

May import k8s, api, model and the leaves (the session only for type hints).
"""

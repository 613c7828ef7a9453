"""The plain data a spec describes and a run produces: below every engine and the harness.

A spec file becomes these objects (cluster, conf, probes, expectations), an engine turns
them into a :mod:`vspec.model.result`, and nothing here imports an engine, so a second
engine (real Volcano) and the harness share one vocabulary.

May import the leaves only (errors, golang, gofmt, registries).
"""

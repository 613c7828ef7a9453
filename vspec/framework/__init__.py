"""The scheduling session (``pkg/scheduler/framework``): cache, session, statement,
the plugin and action registry, and the scheduler loop and Python engine
(:mod:`vspec.framework.engine`) that run them.

May import util, k8s, api, model and the leaves; never an action or plugin by name.
Its modules import each other in a circle, as Volcano's framework package does: the
one package allowed that.
"""

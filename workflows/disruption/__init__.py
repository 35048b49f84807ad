"""One cluster's disruption rounds as a workflow: trigger → compute → validate → execute.

Laid out like the NodeClaim workflow: ``workflow.py`` holds the loop, signals and query;
each phase of a round has its own module (``trigger``, ``compute``, ``execute``).
"""

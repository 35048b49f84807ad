"""Joinery's tests, a package so that every tier imports ``tests.support`` by its name.

pytest (``prepend`` import mode) puts the repository root on ``sys.path`` for packages like
this one, so no test edits ``sys.path`` and two tiers may hold files of the same name.
"""

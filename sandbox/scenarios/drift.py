"""``drift``: placeholder replaced below."""

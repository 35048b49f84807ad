"""The disruption workflow's activities: compute a round's decision, mark and unmark
candidates, launch replacements, watch them initialize, delete the candidates."""

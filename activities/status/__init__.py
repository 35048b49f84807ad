"""Status reporting for the objects users write (NodePools, EC2NodeClasses): conditions that
say whether Joinery can use them and why not, events on the transitions, and usage."""

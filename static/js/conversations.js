// conversations behaviour

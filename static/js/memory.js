// memory behaviour

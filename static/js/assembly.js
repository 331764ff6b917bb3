// assembly behaviour

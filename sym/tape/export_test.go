package tape

// LorenzModel gives the package's external tests the Lorenz model of
// its own tests.
var LorenzModel = lorenzModel

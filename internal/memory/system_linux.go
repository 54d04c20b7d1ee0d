package memory

func system() Info { return linuxInfo("/") }

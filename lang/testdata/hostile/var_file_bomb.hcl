# A -var-file whose value is a billion elements.
cube = [for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]]

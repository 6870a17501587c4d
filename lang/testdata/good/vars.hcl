cams  = 2
label = "from-file"

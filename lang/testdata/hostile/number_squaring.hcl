# A number squared in each local: 1e200, 1e400, 1e800, ...
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  n0 = 1e200
  n1 = local.n0 * local.n0
  n2 = local.n1 * local.n1
  n3 = local.n2 * local.n2
  n4 = local.n3 * local.n3
  n5 = local.n4 * local.n4
  n6 = local.n5 * local.n5
  n7 = local.n6 * local.n6
  n8 = local.n7 * local.n7
  n9 = local.n8 * local.n8
  n10 = local.n9 * local.n9
  n11 = local.n10 * local.n10
  n12 = local.n11 * local.n11
  n13 = local.n12 * local.n12
  n14 = local.n13 * local.n13
  n15 = local.n14 * local.n14
  n16 = local.n15 * local.n15
  n17 = local.n16 * local.n16
  n18 = local.n17 * local.n17
  n19 = local.n18 * local.n18
  n20 = local.n19 * local.n19
  n21 = local.n20 * local.n20
  n22 = local.n21 * local.n21
  n23 = local.n22 * local.n22
  n24 = local.n23 * local.n23
  n25 = local.n24 * local.n24
  n26 = local.n25 * local.n25
  n27 = local.n26 * local.n26
  n28 = local.n27 * local.n27
  n29 = local.n28 * local.n28
  n30 = local.n29 * local.n29
  n31 = local.n30 * local.n30
  n32 = local.n31 * local.n31
  n33 = local.n32 * local.n32
  n34 = local.n33 * local.n33
  n35 = local.n34 * local.n34
  n36 = local.n35 * local.n35
  n37 = local.n36 * local.n36
  n38 = local.n37 * local.n37
  n39 = local.n38 * local.n38
  text = "${local.n39}"
}

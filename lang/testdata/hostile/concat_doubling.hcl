# concat doubling a list 40 times: 2^40 elements.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  c0 = ["x"]
  c1 = concat(local.c0, local.c0)
  c2 = concat(local.c1, local.c1)
  c3 = concat(local.c2, local.c2)
  c4 = concat(local.c3, local.c3)
  c5 = concat(local.c4, local.c4)
  c6 = concat(local.c5, local.c5)
  c7 = concat(local.c6, local.c6)
  c8 = concat(local.c7, local.c7)
  c9 = concat(local.c8, local.c8)
  c10 = concat(local.c9, local.c9)
  c11 = concat(local.c10, local.c10)
  c12 = concat(local.c11, local.c11)
  c13 = concat(local.c12, local.c12)
  c14 = concat(local.c13, local.c13)
  c15 = concat(local.c14, local.c14)
  c16 = concat(local.c15, local.c15)
  c17 = concat(local.c16, local.c16)
  c18 = concat(local.c17, local.c17)
  c19 = concat(local.c18, local.c18)
  c20 = concat(local.c19, local.c19)
  c21 = concat(local.c20, local.c20)
  c22 = concat(local.c21, local.c21)
  c23 = concat(local.c22, local.c22)
  c24 = concat(local.c23, local.c23)
  c25 = concat(local.c24, local.c24)
  c26 = concat(local.c25, local.c25)
  c27 = concat(local.c26, local.c26)
  c28 = concat(local.c27, local.c27)
  c29 = concat(local.c28, local.c28)
  c30 = concat(local.c29, local.c29)
  c31 = concat(local.c30, local.c30)
  c32 = concat(local.c31, local.c31)
  c33 = concat(local.c32, local.c32)
  c34 = concat(local.c33, local.c33)
  c35 = concat(local.c34, local.c34)
  c36 = concat(local.c35, local.c35)
  c37 = concat(local.c36, local.c36)
  c38 = concat(local.c37, local.c37)
  c39 = concat(local.c38, local.c38)
}

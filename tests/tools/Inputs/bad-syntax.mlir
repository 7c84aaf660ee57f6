func.func @forward() {
  %x = seam.bogus
}

// Three nests in one function, for the pragma's clauses: periodic and clamp
// boundaries (which change the edges: a warning says so), a target hint, a
// constant step count, and C++ constants the .st file must reproduce
// exactly (a float literal in a double stencil, an integer division).
#include <utility>

void relax(double *u, double *v, double *a, double *b, int n, int m,
           int steps) {
#pragma stencil boundary(periodic) target(tc)
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n + 1; ++i)
      v[i] = 0.1f * u[i - 1] + (3 / 2) * u[i] + 0.25 * u[i + 1];
    std::swap(u, v);
  }

#pragma stencil boundary(clamp, dirichlet(-1.5))
  for (int t = 0; t < 100; ++t) {
    for (int i = 1; i < n + 1; ++i)
      for (int j = 2; j < m + 2; ++j)
        b[i * (m + 4) + j] = a[(i - 1) * (m + 4) + j] + a[i * (m + 4) + j + 2];
    std::swap(a, b);
  }

#pragma stencil
  for (int t = 1; t <= steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] - u[i + 1];
    std::swap(u, v);
  }
}

// Rodinia's hotspot (its CUDA kernel calculate_temp, one step per
// iteration, and the constants its host code derives), written here from
// its description, against dsl-examples/hotspot.st on a rows x cols chip.
// The constants are computed in float, as Rodinia computes them, and
// passed to the generated run() as its parameters.
#include "hotspot.h"
#include "reference-common.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long rows = std::atoll(argv[1]), cols = std::atoll(argv[2]),
                  steps = std::atoll(argv[3]);
  const size_t points = rows * cols;
  const float t_chip = 0.0005f, chip_height = 0.016f, chip_width = 0.016f;
  const float amb_temp = 80.0f;
  const float max_pd = 3.0e6f, precision = 0.001f, spec_heat_si = 1.75e6f,
              k_si = 100, factor_chip = 0.5f;
  const float grid_height = chip_height / rows, grid_width = chip_width / cols;
  const float cap =
      factor_chip * spec_heat_si * t_chip * grid_width * grid_height;
  const float rx = grid_width / (2.0f * k_si * t_chip * grid_height);
  const float ry = grid_height / (2.0f * k_si * t_chip * grid_width);
  const float rz = t_chip / (k_si * grid_height * grid_width);
  const float max_slope = max_pd / (factor_chip * t_chip * spec_heat_si);
  const float step = precision / max_slope;
  const float step_div_cap = step / cap, rx_1 = 1 / rx, ry_1 = 1 / ry,
              rz_1 = 1 / rz;
  // Temperatures about the ambient's, powers of a few milliwatts per cell.
  std::vector<double> temp = randomField(points, 6, 323, 343);
  const std::vector<double> power = randomField(points, 7, 0, 0.005);
  double *dt = toDevice(temp), *dp = toDevice(power);
  hotspot::Params params;
  params.step_div_cap = step_div_cap;
  params.rx_1 = rx_1;
  params.ry_1 = ry_1;
  params.rz_1 = rz_1;
  params.amb_temp = amb_temp;
  if (hotspot::run(dt, dp, rows, cols, steps, params) != cudaSuccess) {
    std::printf("run failed\n");
    return 1;
  }
  auto at = [&](long long r, long long c) { return r * cols + c; };
  std::vector<double> next(points);
  for (long long s = 0; s < steps; ++s) {
    for (long long r = 0; r < rows; ++r)
      for (long long c = 0; c < cols; ++c) {
        // Rodinia's neighbours, clamped to the chip.
        const long long n = std::max(r - 1, 0LL),
                        so = std::min(r + 1, rows - 1);
        const long long w = std::max(c - 1, 0LL), e = std::min(c + 1, cols - 1);
        const double t = temp[at(r, c)];
        next[at(r, c)] =
            t + static_cast<double>(step_div_cap) *
                    (power[at(r, c)] +
                     (temp[at(so, c)] + temp[at(n, c)] - 2.0 * t) * ry_1 +
                     (temp[at(r, e)] + temp[at(r, w)] - 2.0 * t) * rx_1 +
                     (amb_temp - t) * rz_1);
      }
    std::swap(temp, next);
  }
  return compare("temp", toHost(dt, points), temp) ? 0 : 1;
}

// Host-only main for the linked HIP executable fixture (never run).
extern "C" int launch_vadd(const float *, const float *, float *, int);
extern "C" int launch_vscale(float *, float, int);
int main(int argc, char **) {
  float *p = nullptr;
  return launch_vadd(p, p, p, argc) + launch_vscale(p, 2.0f, argc);
}

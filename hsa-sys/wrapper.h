/* The headers hsa-sys binds, read by scripts/gen-hsa-bindings.sh. Not compiled by cargo. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_loader.h>

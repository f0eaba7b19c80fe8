/* SPDX-License-Identifier: GPL-2.0-only */
/* net/mrc builds against the shims of sim_kernel.h in the simulator */
#include "../sim_kernel.h"

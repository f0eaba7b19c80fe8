// SPDX-License-Identifier: GPL-2.0-only
/* The tracepoints of trace.h, defined once. */
#include "protocol.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

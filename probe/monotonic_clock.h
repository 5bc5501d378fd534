// The one clock deadlines are measured on (the isolated child's, the MPI collection's, the
// probe's --timeout): CLOCK_MONOTONIC, which wall-clock changes (NTP steps, an admin's `date`)
// cannot move.
#pragma once

namespace denpex {

// CLOCK_MONOTONIC in seconds. Never fails.
double monotonic_seconds();

}  // namespace denpex

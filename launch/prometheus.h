// The report as a node_exporter textfile (--prometheus), so an operator can alert when a node
// drifts: versions as labels of info metrics, finding counts by code and severity.
#pragma once

#include <string>

#include "compare/report.h"

namespace denpex {

// Prometheus text exposition format 0.0.4. Label values are escaped (\\, \", \n).
std::string prometheus_text(const ClusterReport& report);

}  // namespace denpex

// Text from a report (log lines, host names, paths: anything from outside) made safe to place in
// an HTML page, as element content or as a quoted attribute value.
#pragma once

#include <string>
#include <string_view>

namespace denpex {

// `s` with & < > " ' as character references and C0 control characters (other than tab and
// newline) and DEL shown as their Unicode control pictures (ESC as U+241B), so a log line's
// "</script>" or terminal escape is shown, never interpreted. Bytes >= 0x80 pass through (the
// page is UTF-8; the browser shows invalid sequences as U+FFFD). Never fails.
std::string html_escape(std::string_view s);

}  // namespace denpex

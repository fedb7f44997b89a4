// load_*/check_*: parse the YAML, run the section readers in dependency
// order (types before topics), collect every problem.

#include "ferry/config/load.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "build_schema.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "ferry/config/units.hpp"
#include "includes.hpp"
#include "readers.hpp"
#include "suggest.hpp"
#include "yaml_parse.hpp"
#include "yaml_reader.hpp"

namespace ferry::config {

namespace {
using detail::Entry;
using detail::quote;
using detail::Reader;

const std::vector<std::string_view> kTopKeys{"domain", "liveness", "pool",   "defaults", "strict",
                                             "types",  "topics",   "limits", "services", "include"};
const std::vector<std::string_view> kLivenessKeys{"heartbeat_ms", "timeout_ms"};
const std::vector<std::string_view> kPoolKeys{"chunk_size", "count"};
constexpr std::string_view kPoolExample = "{ chunk_size: 4KiB, count: 1024 }";

void read_domain(Reader& r, const Entry& e, Config& config) {
  const auto name = r.string(e);
  if (!name) return;
  if (!is_valid_domain_name(*name)) {
    r.error(e.value_pos,
            "invalid domain " + quote(*name) + "; expected 1 to 32 letters, digits, '_' or '-'");
    return;
  }
  config.domain = *name;
}

void read_liveness(Reader& r, const Entry& e, Config& config) {
  if (!r.expect_map(e.value, e.value_pos, "'liveness'", "{ heartbeat_ms: 100, timeout_ms: 1000 }"))
    return;
  const auto entries = r.entries(e.value, "in 'liveness'", kLivenessKeys);
  const Entry* heartbeat = detail::find(entries, "heartbeat_ms");
  const Entry* timeout = detail::find(entries, "timeout_ms");
  Liveness& l = config.liveness;
  if (heartbeat) {
    const auto v = r.integer(*heartbeat, 1, kMaxMillis);
    if (!v) return;
    l.heartbeat_ms = static_cast<std::uint32_t>(*v);
  }
  if (timeout) {
    const auto v = r.integer(*timeout, 1, kMaxMillis);
    if (!v) return;
    l.timeout_ms = static_cast<std::uint32_t>(*v);
  }
  if (l.timeout_ms > l.heartbeat_ms) return;
  const std::string values = "timeout_ms " + std::to_string(l.timeout_ms) +
                             (timeout ? "" : " (the default)") +
                             " is not greater than heartbeat_ms " + std::to_string(l.heartbeat_ms) +
                             (heartbeat ? "" : " (the default)");
  r.error(timeout ? timeout->value_pos : heartbeat->value_pos,
          values + "; expected a timeout of several heartbeats (e.g. 10 x heartbeat_ms)");
}

void read_pool(Reader& r, const Entry& e, Config& config) {
  if (!r.expect_list(e.value, e.value_pos, "'pool'", "[" + std::string(kPoolExample) + "]")) return;
  std::vector<std::pair<PoolClass, SourcePos>> classes;
  std::size_t index = 0;
  for (const YAML::Node& item : e.value) {
    ++index;
    const SourcePos pos = item.IsNull() ? e.value_pos : detail::pos_of(item);
    const std::string what = "pool class " + std::to_string(index);
    if (!r.expect_map(item, pos, what, kPoolExample)) continue;
    const auto entries = r.entries(item, "in " + what, kPoolKeys);
    const Entry* chunk = detail::find(entries, "chunk_size");
    const Entry* count = detail::find(entries, "count");
    if (!chunk || !count) {
      r.error(pos, what + " has no '" + std::string(chunk ? "count" : "chunk_size") +
                       "'; expected " + std::string(kPoolExample));
      continue;
    }
    const auto size = r.size(*chunk, 1, kMaxSampleSize);
    const auto n = r.integer(*count, 1, kMaxPoolChunks);
    if (!size || !n) continue;
    const auto same =
        std::ranges::find(classes, *size, [](const auto& c) { return c.first.chunk_size; });
    if (same != classes.end()) {
      r.error(chunk->value_pos, "duplicate pool class with chunk_size " + format_size(*size) +
                                    "; first declared at " + detail::to_string(same->second) +
                                    " (expected one class per chunk size: add up the counts)");
      continue;
    }
    if (classes.size() == kMaxPoolClasses) {
      r.error(pos, what + " is one too many: the pool has at most " +
                       std::to_string(kMaxPoolClasses) +
                       " size classes; expected fewer classes (merge near sizes into one)");
      continue;
    }
    classes.emplace_back(PoolClass{*size, *n}, chunk->value_pos);
  }
  if (index == 0)
    r.error(e.value_pos, "'pool' has no size classes; expected a list like [" +
                             std::string(kPoolExample) +
                             "], or no 'pool' to size it from the topics");
  for (const auto& c : classes) config.pool.push_back(c.first);
  std::ranges::sort(config.pool, {}, &PoolClass::chunk_size);
}

void read_root(Reader& r, const YAML::Node& root, Config& config, std::vector<Diagnostic>& out) {
  const auto entries = r.entries(root, "at the top level", kTopKeys);
  if (const Entry* e = detail::find(entries, "domain")) read_domain(r, *e, config);
  if (const Entry* e = detail::find(entries, "liveness")) read_liveness(r, *e, config);
  if (const Entry* e = detail::find(entries, "pool")) read_pool(r, *e, config);
  if (const Entry* e = detail::find(entries, "defaults"))
    config.defaults = detail::read_defaults(r, *e);
  if (const Entry* e = detail::find(entries, "strict"))
    config.strict = r.boolean(*e).value_or(false);
  if (const Entry* e = detail::find(entries, "limits")) config.limits = detail::read_limits(r, *e);
  detail::Included included;
  included.files.push_back(config.source);
  if (const Entry* e = detail::find(entries, "include"))
    detail::read_includes(r, *e, config.source, included, out);
  std::vector<TypeDecl> decls = std::move(included.decls);
  if (const Entry* e = detail::find(entries, "types")) {
    for (TypeDecl& d : detail::read_types(r, *e)) decls.push_back(std::move(d));
  }
  config.included_files.assign(included.files.begin() + 1, included.files.end());
  config.included_texts = std::move(included.texts);
  std::vector<Diagnostic> schema_errors;
  config.schema = detail::build_schema(decls, included.files, schema_errors, r.suggestions());
  for (Diagnostic& d : schema_errors) {
    if (d.file == config.source) {
      r.error({d.line, d.column}, std::move(d.message));
    } else {
      out.push_back(std::move(d));
    }
  }
  if (const Entry* e = detail::find(entries, "topics"))
    config.topics =
        detail::read_topics(r, *e, {config.schema, decls, config.defaults, config.pool});
  if (const Entry* e = detail::find(entries, "services"))
    config.services = detail::read_services(r, *e, config.schema, config.topics);
}

// Parses `text` into `config`; every problem goes to `out`.
void parse(std::string_view text, Config& config, std::vector<Diagnostic>& out) {
  Reader r(config.source, out);
  const auto parsed = detail::parse_yaml(text);
  if (!parsed) {
    if (parsed.error().too_large) {
      r.error(parsed.error().pos, parsed.error().what + "; expected fewer aliases of large nodes");
      return;
    }
    r.error(parsed.error().pos,
            "YAML syntax error: " + parsed.error().what +
                "; expected well-formed YAML (check brackets, quotes, colons and indentation)");
    return;
  }
  if (parsed->second_document) {
    r.error(*parsed->second_document,
            "a second YAML document ('---'); expected one document per configuration file");
  }
  if (parsed->root.IsNull()) {
    r.error({1, 1},
            "the configuration is empty; expected a map with keys such as 'types' and "
            "'topics'");
    return;
  }
  const YAML::Node& root = parsed->root;
  if (!root.IsMap()) {
    r.error(detail::pos_of(root), std::string("the top level is ") +
                                      (root.IsSequence() ? "a list" : "a single value") +
                                      "; expected a map with keys " + detail::join(kTopKeys));
    return;
  }
  read_root(r, root, config, out);
}

std::vector<Diagnostic> check(std::string_view text, std::string_view name, Config& config) {
  config.source = std::string(name);
  std::vector<Diagnostic> out;
  parse(text, config, out);
  // Sections are read in dependency order; report in source order.
  std::ranges::stable_sort(out, [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  if (out.size() > kMaxReportedProblems) {
    // Thousands of lines help no one; where the unlisted ones start does.
    const std::size_t more = out.size() - kMaxReportedProblems;
    Diagnostic& first_unlisted = out[kMaxReportedProblems];
    first_unlisted.message =
        std::to_string(more) + " more problems from here on are not listed; expected at most " +
        std::to_string(kMaxReportedProblems) + " at once (fix these and check again)";
    out.resize(kMaxReportedProblems + 1);
  }
  return out;
}

std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Diagnostic file_error(const std::filesystem::path& path, std::string message) {
  return Diagnostic{path.string(), 0, 0, std::move(message)};
}

}  // namespace

std::vector<Diagnostic> check_string(std::string_view text, std::string_view name_for_errors) {
  Config config;
  return check(text, name_for_errors, config);
}

std::expected<std::string, Diagnostic> read_config_text(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO without a writer would wait for one.
  const FdCloser file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  const auto cannot_read = [&path](int err) {
    return std::unexpected(file_error(path, "cannot read: " + std::string(std::strerror(err)) +
                                                "; expected a readable YAML file"));
  };
  if (file.fd < 0) return cannot_read(errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return cannot_read(errno);
  if (!S_ISREG(st.st_mode))
    return std::unexpected(file_error(path, "is " + std::string(file_kind(st.st_mode)) +
                                                ", not a regular file; expected a YAML file"));
  const auto too_big = [&path](std::uint64_t size) {
    return std::unexpected(file_error(path, "is " + std::to_string(size) + " bytes, over the " +
                                                format_size(kMaxConfigFileSize) +
                                                " limit for a configuration file; expected a "
                                                "smaller file"));
  };
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigFileSize) return too_big(st.st_size);
  // Read at most one byte past the limit: the file may grow meanwhile, and
  // files such as those of /proc report size 0.
  std::string text(kMaxConfigFileSize + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(file.fd, text.data() + got, text.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return cannot_read(errno);
    }
    got += static_cast<std::size_t>(n);
  }
  if (got > kMaxConfigFileSize) return too_big(got);
  text.resize(got);
  text.shrink_to_fit();
  return text;
}

std::vector<Diagnostic> check_file(const std::filesystem::path& path) {
  auto text = read_config_text(path);
  if (!text) return {std::move(text.error())};
  return check_string(*text, path.string());
}

Config load_string(std::string_view text, std::string_view name_for_errors) {
  Config config;
  auto errors = check(text, name_for_errors, config);
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return config;
}

Config load_file(const std::filesystem::path& path) {
  auto text = read_config_text(path);
  if (!text) throw ConfigError({std::move(text.error())});
  return load_string(*text, path.string());
}

}  // namespace ferry::config

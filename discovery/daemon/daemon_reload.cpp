// DaemonIo: SIGHUP re-reads the YAML (docs/operations/ferryd.md). The file
// is read and parsed on a thread of its own (a file may take a while,
// however bounded), never on the serving loop; only the result is handed to
// the core there (daemon_core_reload.cpp decides whether it applies).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdint>
#include <thread>
#include <variant>

#include "daemon_io.hpp"
#include "ferry/config/error.hpp"
#include "ferry/config/load.hpp"

namespace ferry::discovery {

namespace {

// As ferryd read it at start (a regular file within the size limit): the
// text is kept for GetConfig. Throws ConfigError naming the file and why.
LoadedConfig load(const std::string& path) {
  LoadedConfig loaded;
  auto text = config::read_config_text(path);
  if (!text) throw config::ConfigError({std::move(text.error())});
  loaded.config = config::load_string(*text, path);
  loaded.text = config::self_contained_text(loaded.config, *text);
  return loaded;
}

}  // namespace

void DaemonIo::reload() {
  if (reload_job_) {  // one read at a time; the file is read again after it
    reload_again_ = true;
    return;
  }
  notifier_.reloading();
  const std::string path = options_.config_source;
  spdlog::info("SIGHUP: re-reading {}", path);
  reload_job_ = std::make_unique<ReloadJob>();
  ReloadJob* job = reload_job_.get();
  const int done_fd = reload_fd_;
  job->thread = std::thread([job, path, done_fd] {
    try {
      job->result = load(path);
    } catch (const config::ConfigError& e) {
      job->result = std::string(e.what());
    } catch (const std::exception& e) {
      job->result = fmt::format("{}: {}", path, e.what());
    }
    // SYNC: the eventfd write happens before the loop's read of it, and
    // the loop joins the thread before it reads `result`.
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(done_fd, &one, sizeof one);
  });
}

void DaemonIo::finish_reload() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(reload_fd_, &count, sizeof count);
  if (!reload_job_) return;
  reload_job_->thread.join();
  auto result = std::move(reload_job_->result);
  reload_job_.reset();
  if (auto* error = std::get_if<std::string>(&result)) {
    core_.reload(std::move(*error));
  } else if (auto* next = std::get_if<LoadedConfig>(&result)) {
    core_.reload(std::move(*next));
  }
  notifier_.ready();
  if (reload_again_) {
    reload_again_ = false;
    reload();
  }
}

}  // namespace ferry::discovery

// The isolated kernel runner's worker management. See src/measure/isolated_runner.hpp.
#include "measure/isolated_runner.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "measure/kernel_protocol.hpp"
#include "measure/kernel_session.hpp"
#include "measure/reference_entry.hpp"

extern char** environ;

namespace tunekit::measure {
namespace {

/// Seconds a worker may take on top of the trial timeout before it counts as silent (its own
/// child handling, loading the artefact); also the limit of its start and preparation.
constexpr double kWorkerGraceS = 10.0;

/// How a worker starts: the socket end `fd` as its standard input and output, no other
/// descriptor of the tuning process (glibc >= 2.34; the rest are close-on-exec already),
/// default signal actions and an empty signal mask (an ignored SIGCHLD would let its trial
/// children vanish unreaped and their crashes go unseen), and a process group of its own
/// (signals sent to the tuning process's group do not reach it). The program splits into the
/// keeper, the process spawned here, and the worker below it (src/measure/worker_keeper.hpp).
struct WorkerSpawn {
  explicit WorkerSpawn(int fd) {
    ::posix_spawnattr_init(&attr);
    ::posix_spawn_file_actions_init(&actions);
    sigset_t none;
    sigset_t all;
    ::sigemptyset(&none);
    ::sigfillset(&all);
    error = ::posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (error == 0) error = ::posix_spawnattr_setpgroup(&attr, 0);
    if (error == 0) error = ::posix_spawnattr_setsigmask(&attr, &none);
    if (error == 0) error = ::posix_spawnattr_setsigdefault(&attr, &all);
    if (error == 0) error = ::posix_spawn_file_actions_adddup2(&actions, fd, 0);
    if (error == 0) error = ::posix_spawn_file_actions_adddup2(&actions, fd, 1);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    if (error == 0) error = ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  }
  ~WorkerSpawn() {
    ::posix_spawnattr_destroy(&attr);
    ::posix_spawn_file_actions_destroy(&actions);
  }
  WorkerSpawn(const WorkerSpawn&) = delete;
  WorkerSpawn& operator=(const WorkerSpawn&) = delete;

  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  int error = 0;
};

/// Waits up to `limit_s` seconds for the child `pid` to end and reaps it (its wait status in
/// `status`); false when it is still running.
bool reaped_within(pid_t pid, double limit_s, int& status) {
  const int polls = static_cast<int>(limit_s * 100.0);
  for (int i = 0; i <= polls; ++i) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

MeasureResult failure(MeasureErrorNo code, std::string message) {
  MeasureResult r;
  r.error_no = code;
  r.error_msg = std::move(message);
  return r;
}

}  // namespace

Expected<std::shared_ptr<IsolatedRunner>> IsolatedRunner::create(const KernelSource& source,
                                                                 const KernelProblem& problem,
                                                                 const RunnerOptions& options,
                                                                 const std::string& worker_path) {
  std::shared_ptr<IsolatedRunner> runner(new IsolatedRunner());
  runner->worker_path_ = worker_path;
  runner->timeout_s_ = options.timing.timeout_s;
  runner->replace_after_failure_ =
      options.isolation == Isolation::kWorker && source.language == KernelLanguage::kCpp;
  const SessionVerify verify = session_verify_of(options);
  runner->init_message_ = {
      {"op", "init"},
      {"language", std::string(to_string(source.language))},
      {"entry", source.entry},
      {"launch", {{"global", source.launch.global}, {"local", source.launch.local}}},
      {"problem", problem_to_json(problem)},
      {"timing", timing_to_json(options.timing)},
      {"verify", verify_to_json(verify)},
      {"fork", options.isolation == Isolation::kProcess}};
  auto reference = reference_entry(source, options);
  if (!reference) return reference.status();
  if (!reference->artifact.empty()) {
    runner->init_message_["reference"] = {{"artifact", reference->artifact},
                                          {"entry", reference->entry},
                                          {"params", reference->params}};
  }
  TUNEKIT_RETURN_IF_ERROR(runner->start());
  return runner;
}

IsolatedRunner::~IsolatedRunner() { stop(/*kill_first=*/false); }

Status IsolatedRunner::spawn() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status(StatusCode::kIoError,
                  std::string("cannot create the worker's socket: ") + std::strerror(errno));
  }
  WorkerSpawn setup(fds[1]);
  std::string path = worker_path_;
  char* argv[] = {path.data(), nullptr};
  int rc = setup.error;
  if (rc == 0) rc = ::posix_spawn(&pid_, path.c_str(), &setup.actions, &setup.attr, argv, environ);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    pid_ = -1;
    return Status(StatusCode::kIoError, fmt::format("cannot start the kernel worker '{}': {}",
                                                    worker_path_, std::strerror(rc)));
  }
  fd_ = fds[0];
  channel_ = LineChannel(fd_, fd_);
  return Status::ok();
}

Status IsolatedRunner::start() {
  TUNEKIT_RETURN_IF_ERROR(spawn());
  std::string line;
  Status sent = channel_.write_line(init_message_.dump());
  const auto read =
      sent.is_ok() ? channel_.read_line(line, timeout_s_ + kWorkerGraceS) : LineChannel::Read::kEof;
  if (read != LineChannel::Read::kLine) {
    const std::string how = stop(/*kill_first=*/read == LineChannel::Read::kTimeout);
    return Status(StatusCode::kRuntimeError,
                  fmt::format("the kernel worker '{}' did not start ({})", worker_path_, how));
  }
  const nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
  if (!reply.is_object() || !reply.value("ok", false)) {
    stop(/*kill_first=*/true);
    const std::string why = reply.is_object() ? reply.value("error", line) : line;
    return Status(StatusCode::kRuntimeError, "the kernel worker failed to prepare: " + why);
  }
  fork_per_trial_ = reply.value("fork", true);
  return Status::ok();
}

void IsolatedRunner::end_worker() const {
  ::kill(pid_, SIGCONT);  // a kernel may have stopped the keeper, its parent
  ::kill(pid_, SIGTERM);
}

std::string IsolatedRunner::stop(bool kill_first) {
  if (pid_ < 0) return "";
  if (kill_first) end_worker();
  ::close(fd_);
  fd_ = -1;
  channel_ = LineChannel();
  int status = 0;
  // A worker reads end of input and exits, and its keeper follows once it has ended what the
  // kernels left; a worker still there after a second is ended, and a keeper still there two
  // seconds later is killed.
  if (!reaped_within(pid_, 1.0, status)) {
    end_worker();
    if (!reaped_within(pid_, 2.0, status)) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  // Whatever is left in the keeper's group (the group's id stays reserved while it has
  // members, so this reaches no other process).
  ::kill(-pid_, SIGKILL);
  pid_ = -1;
  last_status_ = status;
  return describe_wait_status(status);
}

MeasureResult IsolatedRunner::measure_one(const MeasureInput& input, const BuildResult& build) {
  if (pid_ < 0) {
    Status started = start();
    if (!started.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, started.message());
  }
  const nlohmann::json message = {
      {"op", "trial"}, {"artifact", build.artifact}, {"params", config_params(input.config)}};
  return exchange_trial(message);
}

void IsolatedRunner::remember_reference(const nlohmann::json& trial_message) {
  if (init_message_.contains("reference")) return;
  init_message_["reference"] = {{"artifact", trial_message["artifact"]},
                                {"entry", init_message_["entry"]},
                                {"params", trial_message["params"]}};
}

MeasureResult IsolatedRunner::exchange_trial(const nlohmann::json& message) {
  std::string line;
  const double limit = fork_per_trial_ ? timeout_s_ + kWorkerGraceS : timeout_s_;
  const auto read = channel_.write_line(message.dump()).is_ok() ? channel_.read_line(line, limit)
                                                                : LineChannel::Read::kEof;
  if (read == LineChannel::Read::kLine) {
    auto outcome = outcome_from_json(nlohmann::json::parse(line, nullptr, false));
    if (outcome) {
      if (outcome->captured) remember_reference(message);
      if (replace_after_failure_ && !outcome->result.ok()) stop(/*kill_first=*/false);
      return std::move(outcome->result);
    }
  }
  if (read == LineChannel::Read::kTimeout) {
    stop(/*kill_first=*/true);
    return failure(
        MeasureErrorNo::kRunTimeout,
        fork_per_trial_
            ? fmt::format("the kernel worker stopped answering (killed after {} s)", limit)
            : fmt::format("ran past the {} s timeout", timeout_s_));
  }
  const std::string how = stop(/*kill_first=*/true);
  if (fork_per_trial_) {
    return failure(MeasureErrorNo::kRuntimeDevice, "the kernel worker died (" + how + ")");
  }
  if (WIFEXITED(last_status_)) {
    return failure(
        MeasureErrorNo::kRuntimeDevice,
        fmt::format("the kernel exited its worker (status {})", WEXITSTATUS(last_status_)));
  }
  return failure(MeasureErrorNo::kRuntimeDevice, "the kernel crashed its worker (" + how + ")");
}

}  // namespace tunekit::measure

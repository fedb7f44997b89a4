// The fusion node on a Boost.Asio event loop: the WaitSet's fd() in a
// posix::stream_descriptor beside a 50 Hz steady_timer, for programs whose
// other inputs (sockets, serial ports, Qt) already live in an event loop.
// When the descriptor is readable, wait(0) says which inputs have samples
// (and re-arms the descriptor). Ends on the stop command.
// Usage: fusion_asio
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "inputs.hpp"

namespace {

int run(int argc, char** argv) {
  example::App app{"The fusion node on a Boost.Asio loop, through WaitSet::fd()", "fusion_asio"};
  example::parse(app, argc, argv, "fusion_asio");

  ferry::Node node{"fusion_asio"};
  auto poses = node.subscriber<Pose>("robot/pose");
  auto commands = node.subscriber<Command>("robot/cmd");
  auto images = node.subscriber<Image>("camera/image");
  ferry::WaitSet ws;
  const std::size_t pose_input = ws.attach(poses);
  const std::size_t command_input = ws.attach(commands);
  const std::size_t image_input = ws.attach(images);

  boost::asio::io_context io;
  // The WaitSet owns its descriptor; asio gets a duplicate to close.
  boost::asio::posix::stream_descriptor inputs(io, ::dup(ws.fd()));
  std::uint64_t pose_count = 0;
  std::uint64_t image_count = 0;
  std::uint64_t next_command = 0;
  std::uint64_t control_ticks = 0;
  bool stopped = false;

  std::function<void()> await_inputs = [&] {
    inputs.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                      [&](const boost::system::error_code& ec) {
                        if (ec) return;
                        const ferry::Ready ready = ws.wait(std::chrono::nanoseconds::zero());
                        if (ready.contains(pose_input)) {
                          while (poses.take()) ++pose_count;
                        }
                        if (ready.contains(image_input)) {
                          while (images.take()) ++image_count;
                        }
                        if (ready.contains(command_input)) {
                          while (auto c = commands.take()) {
                            if ((*c)->seq != next_command)
                              example::fail("command order broken at " + std::to_string((*c)->seq));
                            ++next_command;
                            stopped = stopped || (*c)->stop;
                          }
                        }
                        if (stopped) {
                          io.stop();
                          return;
                        }
                        await_inputs();
                      });
  };
  boost::asio::steady_timer control(io);
  auto deadline = std::chrono::steady_clock::now();
  std::function<void()> control_loop = [&] {
    deadline += std::chrono::milliseconds(20);  // absolute: no drift
    control.expires_at(deadline);
    control.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      ++control_ticks;
      control_loop();
    });
  };
  await_inputs();
  control_loop();
  io.run();
  std::printf(
      "fusion_asio: %llu poses, %llu commands in order, %llu images, %llu control ticks\n",
      static_cast<unsigned long long>(pose_count), static_cast<unsigned long long>(next_command),
      static_cast<unsigned long long>(image_count), static_cast<unsigned long long>(control_ticks));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("fusion_asio", [&] { return run(argc, argv); });
}

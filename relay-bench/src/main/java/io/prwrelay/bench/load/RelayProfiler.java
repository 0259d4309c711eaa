package io.prwrelay.bench.load;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.nio.file.Path;

/**
 * async-profiler in the spawned relay for the measured window only ({@code --profile-agent LIB
 * --profile OPTIONS}): the agent library is loaded into the relay through the attach API with
 * {@code start,OPTIONS} when measuring starts and again with {@code stop,OPTIONS} when it ends,
 * which writes the output the options name (e.g. {@code
 * event=itimer,interval=1ms,collapsed,file=/tmp/relay.collapsed}). Start-up, warm-up and the JIT's
 * first compilations stay out of the profile.
 *
 * @param library {@code libasyncProfiler.so}
 * @param options the profiler's options, without the action
 */
record RelayProfiler(Path library, String options) {
  /**
   * Starts profiling the JVM {@code pid}.
   *
   * @throws IOException when the agent cannot be loaded or refuses the options
   */
  void start(long pid) throws IOException {
    command(pid, "start," + options);
  }

  /**
   * Stops profiling the JVM {@code pid} and writes the output.
   *
   * @throws IOException when the agent cannot be loaded or refuses the options
   */
  void stop(long pid) throws IOException {
    command(pid, "stop," + options);
  }

  private void command(long pid, String arguments) throws IOException {
    try {
      VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
      try {
        vm.loadAgentPath(library.toAbsolutePath().toString(), arguments);
      } finally {
        vm.detach();
      }
    } catch (AttachNotSupportedException | AgentLoadException | AgentInitializationException e) {
      throw new IOException("async-profiler " + arguments + " in pid " + pid + ": " + e, e);
    }
  }
}

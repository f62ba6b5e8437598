// dotnet-exit - a short-lived .NET program, for the tests that check rtdiag
// never keeps a program from exiting (tests/integration/agent/test_exit.sh,
// tests/integration/dotnet/test_exit.sh start many of it at once).
//
//   dotnet-exit DIR INTERVAL_MS OFFSET_MS [WAIT_MS]
//
// Writes DIR/ready (its pid) once Main runs. Then waits, for up to WAIT_MS
// (default 30000), for an EventCounters session: the runtime's
// ".NET Counter Poller" thread, which the first session asking for
// EventCounters starts (read from /proc/self/task/*/comm every 10 ms).
// From then it sleeps INTERVAL_MS + OFFSET_MS - the session's first counter
// collection comes one interval after it started, and the tests spread
// OFFSET_MS so that some programs end just before, during and after it -
// and returns from Main, after writing DIR/returned:
//   "PID UNIX_NS SESSION"
// UNIX_NS the wall clock (CLOCK_REALTIME, ns) as Main returns, SESSION 1
// when the poller thread was seen, 0 when WAIT_MS passed without it.
// Everything after that line is the runtime's own shutdown.
//
// The program touches no thread pool, task or timer, like a small tool that
// does its work and ends: their class constructors have not run when the
// session's first collection runs them.
using System;
using System.IO;
using System.Threading;

static class Program
{
    static void Put(string dir, string name, string text)
    {
        File.WriteAllText(Path.Combine(dir, name + ".tmp"), text);
        File.Move(Path.Combine(dir, name + ".tmp"), Path.Combine(dir, name), true);
    }

    static bool HasPoller()
    {
        foreach (string task in Directory.GetDirectories("/proc/self/task")) {
            try {
                if (File.ReadAllText(Path.Combine(task, "comm")).StartsWith(".NET Counter Po"))
                    return true;
            } catch (IOException) {
                // the thread ended between the listing and the read
            }
        }
        return false;
    }

    static int Main(string[] args)
    {
        if (args.Length < 3) {
            Console.Error.WriteLine("usage: dotnet-exit DIR INTERVAL_MS OFFSET_MS [WAIT_MS]");
            return 2;
        }
        string dir = args[0];
        int interval = int.Parse(args[1]), offset = int.Parse(args[2]);
        int wait = args.Length > 3 ? int.Parse(args[3]) : 30000;
        int pid = Environment.ProcessId;
        Put(dir, "ready", pid.ToString());
        long until = Environment.TickCount64 + wait;
        bool session = false;
        while (!(session = HasPoller()) && Environment.TickCount64 < until)
            Thread.Sleep(10);
        if (session && interval + offset > 0)
            Thread.Sleep(interval + offset);
        long ns = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
        Put(dir, "returned", pid + " " + ns + " " + (session ? 1 : 0) + "\n");
        return 0;
    }
}

// dotnet-hook - a startup hook for rtdiag's ApplyStartupHook test.
// The runtime calls StartupHook.Initialize() before Main; it writes the
// pid into $RTDIAG_HOOK_OUT so the test sees the hook's code really ran.
using System;
using System.IO;

internal class StartupHook
{
    public static void Initialize()
    {
        string outPath = Environment.GetEnvironmentVariable("RTDIAG_HOOK_OUT");
        if (!string.IsNullOrEmpty(outPath))
            File.WriteAllText(outPath, "hook ran in " + Environment.ProcessId);
    }
}

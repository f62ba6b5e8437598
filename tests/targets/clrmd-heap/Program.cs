// clrmd-heap PID - the type histograms of a live .NET process's GC heap as
// ClrMD (Microsoft.Diagnostics.Runtime) reads it: the process is suspended
// (ptrace) while its heap is read through the runtime's DAC.
//
// Prints "R<TAB>count<TAB>bytes<TAB>type" for the objects reachable from
// the roots ClrMD enumerates (following each object's references), then
// "H<TAB>count<TAB>bytes<TAB>type" for every object on the heap, dead or
// alive (free space excluded): right after a full blocking GC, as a heap
// snapshot takes, those are the live objects plus what was allocated since.
using System;
using System.Collections.Generic;
using System.Linq;
using Microsoft.Diagnostics.Runtime;

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length != 1 || !int.TryParse(args[0], out int pid)) {
            Console.Error.WriteLine("usage: clrmd-heap PID");
            return 2;
        }
        using DataTarget dt = DataTarget.AttachToProcess(pid, suspend: true);
        ClrInfo clr = dt.ClrVersions[0];
        // the DAC shipped beside the target's runtime: ClrMD's own search
        // does not find it here, and reads the runtime's version as 0.0 on
        // this Linux build, so the version check is what has to be skipped
        // (the DAC of the runtime's own folder is its match by construction)
        string dac = System.IO.Path.Combine(System.IO.Path.GetDirectoryName(clr.ModuleInfo.FileName),
                                            "libmscordaccore.so");
        ClrRuntime rt = clr.CreateRuntime(dac, ignoreMismatch: true);
        ClrHeap heap = rt.Heap;
        if (!heap.CanWalkHeap) {
            Console.Error.WriteLine("clrmd-heap: the heap cannot be walked now");
            return 1;
        }
        var seen = new HashSet<ulong>();
        var work = new Stack<ulong>();
        foreach (ClrRoot r in heap.EnumerateRoots())
            if (r.Object.Address != 0 && seen.Add(r.Object.Address))
                work.Push(r.Object.Address);
        var byType = new Dictionary<string, (long count, long bytes)>();
        while (work.Count > 0) {
            ClrObject o = heap.GetObject(work.Pop());
            if (!o.IsValid || o.IsFree)
                continue;
            string t = o.Type?.Name ?? "?";
            long size = (long)o.Size;
            byType.TryGetValue(t, out var v);
            byType[t] = (v.count + 1, v.bytes + size);
            foreach (ClrObject c in o.EnumerateReferences(carefully: false, considerDependantHandles: true))
                if (c.Address != 0 && seen.Add(c.Address))
                    work.Push(c.Address);
        }
        var all = new Dictionary<string, (long count, long bytes)>();
        foreach (ClrObject o in heap.EnumerateObjects()) {
            if (!o.IsValid || o.IsFree)
                continue;
            string t = o.Type?.Name ?? "?";
            all.TryGetValue(t, out var v);
            all[t] = (v.count + 1, v.bytes + (long)o.Size);
        }
        Print("R", byType);
        Print("H", all);
        return 0;
    }

    static void Print(string tag, Dictionary<string, (long count, long bytes)> h)
    {
        foreach (var kv in h.OrderByDescending(kv => kv.Value.bytes).ThenBy(kv => kv.Key, StringComparer.Ordinal))
            Console.WriteLine($"{tag}\t{kv.Value.count}\t{kv.Value.bytes}\t{kv.Key}");
    }
}

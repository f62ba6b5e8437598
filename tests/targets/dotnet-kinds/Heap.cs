// dotnet-kinds DIR heap K - keeps a known object graph alive, for the
// tests of 'rtdiag dotnet gcdump'.
//
// Keeps one HeapTreeRoot referencing a binary tree of exactly K HeapTreeNode
// objects, each holding a byte[100] of its own; nothing else references
// them. Writes DIR/sizes: "K NODE ARRAY ROOT TOTAL" - the sizes of one
// node and of the root (measured with GC.GetAllocatedBytesForCurrentThread
// around one allocation: both are multiples of 8, so no padding), of one
// byte[100] as an object (header, method table and length, then the bytes:
// the allocator pads it to 8, the object itself is not) and the tree's
// total - then DIR/ready. Exits when DIR/stop exists.
using System;
using System.IO;
using System.Threading;

sealed class HeapTreeNode
{
    public HeapTreeNode Left, Right;
    public byte[] Payload;
}

sealed class HeapTreeRoot
{
    public HeapTreeNode Top;
    public int Count;
}

static class HeapProgram
{
    static HeapTreeRoot keep;

    static long SizeOf(Func<object> make)
    {
        make(); // warm
        long a = GC.GetAllocatedBytesForCurrentThread();
        object o = make();
        long b = GC.GetAllocatedBytesForCurrentThread();
        GC.KeepAlive(o);
        return b - a;
    }

    static HeapTreeNode Build(int n)
    {
        if (n == 0) return null;
        var node = new HeapTreeNode { Payload = new byte[100] };
        int left = (n - 1) / 2;
        node.Left = Build(left);
        node.Right = Build(n - 1 - left);
        return node;
    }

    public static int Run(string dir, int k)
    {
        long node = SizeOf(() => new HeapTreeNode());
        long array = 3 * IntPtr.Size + 100;
        long root = SizeOf(() => new HeapTreeRoot());
        keep = new HeapTreeRoot { Top = Build(k), Count = k };
        long total = root + k * (node + array);
        File.WriteAllText(Path.Combine(dir, "sizes"), $"{k} {node} {array} {root} {total}");
        File.WriteAllText(Path.Combine(dir, "ready"), Environment.ProcessId.ToString());
        string stop = Path.Combine(dir, "stop");
        while (!File.Exists(stop)) Thread.Sleep(50);
        GC.KeepAlive(keep);
        return 0;
    }
}

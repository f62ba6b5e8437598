// gcdump-graph DOTNET_GCDUMP_DLL FILE.gcdump TYPE...
// Opens FILE with dotnet-gcdump's own reader (GCHeapDump, loaded from the
// tool's dotnet-gcdump.dll: the code 'dotnet-gcdump report' runs), walks
// the graph from its root node through every node's children, and prints
//   nodes N reachable R root ROOTTYPE
//   TYPE count C children E (for each TYPE: its reachable nodes and the
//                            children they hold)
// Exit 0, or 1 with the reader's error.
using System;
using System.Collections.Generic;
using System.Reflection;

static class Program
{
    static int Main(string[] args)
    {
        try
        {
            Assembly asm = Assembly.LoadFrom(args[0]);
            Type dumpType = asm.GetType("GCHeapDump", true);
            Type indexType = asm.GetType("Graphs.NodeIndex", true);
            dynamic dump = Activator.CreateInstance(dumpType, new object[] { args[1] });
            dynamic g = dump.MemoryGraph;
            long n = g.NodeCount;
            dynamic node = g.AllocNodeStorage();
            dynamic typeStorage = g.AllocTypeNodeStorage();
            var seen = new bool[n];
            var count = new Dictionary<string, long>();
            var children = new Dictionary<string, long>();
            int root = Convert.ToInt32((object)g.RootIndex);
            var todo = new Stack<int>();
            todo.Push(root);
            seen[root] = true;
            long reachable = 0;
            string rootType = null;
            while (todo.Count > 0)
            {
                int i = todo.Pop();
                reachable++;
                g.GetNode((dynamic)Enum.ToObject(indexType, i), node);
                string type = g.GetType(node.TypeIndex, typeStorage).Name;
                if (i == root)
                    rootType = type;
                long c = 0;
                for (int k = Convert.ToInt32((object)node.GetFirstChildIndex()); k >= 0;
                     k = Convert.ToInt32((object)node.GetNextChildIndex()))
                {
                    c++;
                    if (k < n && !seen[k])
                    {
                        seen[k] = true;
                        todo.Push(k);
                    }
                }
                count[type] = (count.TryGetValue(type, out long x) ? x : 0) + 1;
                children[type] = (children.TryGetValue(type, out long y) ? y : 0) + c;
            }
            Console.WriteLine($"nodes {n} reachable {reachable} root {rootType}");
            for (int a = 2; a < args.Length; a++)
                Console.WriteLine($"{args[a]} count {(count.TryGetValue(args[a], out long cn) ? cn : 0)} " +
                                  $"children {(children.TryGetValue(args[a], out long ch) ? ch : 0)}");
            return 0;
        }
        catch (Exception e)
        {
            Console.Error.WriteLine(e.GetBaseException().Message);
            return 1;
        }
    }
}

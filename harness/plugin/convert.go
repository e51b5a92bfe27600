package plugin

import (
	"github.com/xbench/xbench/harness/backend"
	pb "github.com/xbench/xbench/harness/plugin/proto"
	"github.com/xbench/xbench/harness/result"
)

// The functions below only move fields between the contract's Go types and
// their protobuf twins; no behaviour lives here.

func capsToProto(c backend.Capabilities) *pb.Capabilities {
	out := &pb.Capabilities{}
	for _, w := range c.Workloads {
		pw := &pb.WorkloadCaps{Workload: w.Workload, Phases: w.Phases, Devices: w.Devices, Max: w.Max}
		if len(w.Values) > 0 {
			pw.Values = map[string]*pb.Values{}
			for k, v := range w.Values {
				pw.Values[k] = &pb.Values{Values: v}
			}
		}
		out.Workloads = append(out.Workloads, pw)
	}
	return out
}

func capsFromProto(c *pb.Capabilities) backend.Capabilities {
	var out backend.Capabilities
	if c == nil {
		return out
	}
	for _, pw := range c.Workloads {
		w := backend.WorkloadCaps{Workload: pw.Workload, Phases: pw.Phases, Devices: pw.Devices, Max: pw.Max}
		if len(pw.Values) > 0 {
			w.Values = map[string][]string{}
			for k, v := range pw.Values {
				w.Values[k] = v.GetValues()
			}
		}
		out.Workloads = append(out.Workloads, w)
	}
	return out
}

func infoToProto(i backend.Info) *pb.InfoReply {
	out := &pb.InfoReply{Name: i.Name, Description: i.Description, Capabilities: capsToProto(i.Capabilities)}
	for _, v := range i.Variants {
		out.Variants = append(out.Variants, &pb.Variant{Name: v.Name, Description: v.Description,
			Capabilities: capsToProto(v.Capabilities)})
	}
	return out
}

func infoFromProto(p *pb.InfoReply) backend.Info {
	out := backend.Info{Name: p.Name, Description: p.Description, Capabilities: capsFromProto(p.Capabilities)}
	for _, v := range p.Variants {
		out.Variants = append(out.Variants, backend.Variant{Name: v.Name, Description: v.Description,
			Capabilities: capsFromProto(v.Capabilities)})
	}
	return out
}

func configToProto(c result.Config) *pb.Config {
	return &pb.Config{Workload: c.Workload, Phase: c.Phase, Params: c.Params,
		Warmup: int64(c.Warmup), Repeats: int64(c.Repeats)}
}

func configFromProto(c *pb.Config) result.Config {
	if c == nil {
		return result.Config{}
	}
	return result.Config{Workload: c.Workload, Phase: c.Phase, Params: c.Params,
		Warmup: int(c.Warmup), Repeats: int(c.Repeats)}
}

func runToProto(r backend.RunRequest) *pb.RunRequest {
	return &pb.RunRequest{Workload: r.Workload, Variant: r.Variant, Device: r.Device, Config: configToProto(r.Config),
		Mode: &pb.Mode{ColdCache: r.Mode.ColdCache, CudaGraph: r.Mode.CUDAGraph}}
}

func runFromProto(r *pb.RunRequest) backend.RunRequest {
	return backend.RunRequest{Workload: r.Workload, Variant: r.Variant, Device: r.Device, Config: configFromProto(r.Config),
		Mode: result.Mode{ColdCache: r.GetMode().GetColdCache(), CUDAGraph: r.GetMode().GetCudaGraph()}}
}

func deviceToProto(d result.Device) *pb.Device {
	return &pb.Device{Kind: d.Kind, Name: d.Name, Driver: d.Driver, Count: int32(d.Count)}
}

func deviceFromProto(d *pb.Device) result.Device {
	if d == nil {
		return result.Device{}
	}
	return result.Device{Kind: d.Kind, Name: d.Name, Driver: d.Driver, Count: int(d.Count)}
}

func exportToProto(r backend.ExportRequest) *pb.ExportRequest {
	return &pb.ExportRequest{Workload: r.Workload, Variant: r.Variant, Device: r.Device,
		Config: configToProto(r.Config), WeightsPath: r.WeightsPath, InputsPath: r.InputsPath,
		OutputPath: r.OutputPath}
}

func exportFromProto(p *pb.ExportRequest) backend.ExportRequest {
	return backend.ExportRequest{Workload: p.Workload, Variant: p.Variant, Device: p.Device,
		Config: configFromProto(p.Config), WeightsPath: p.WeightsPath, InputsPath: p.InputsPath,
		OutputPath: p.OutputPath}
}

package plugin

import (
	"github.com/xbench/xbench/harness/backend"
	pb "github.com/xbench/xbench/harness/plugin/proto"
	"github.com/xbench/xbench/harness/result"
)

// The functions below only move fields between the contract's Go types and
// their protobuf twins; no behaviour lives here.

func capsToProto(c backend.Capabilities) *pb.Capabilities {
	return &pb.Capabilities{Workloads: c.Workloads, TttTypes: c.TTTTypes, Phases: c.Phases,
		Dtypes: c.Dtypes, Devices: c.Devices, Backbones: c.Backbones}
}

func capsFromProto(c *pb.Capabilities) backend.Capabilities {
	if c == nil {
		return backend.Capabilities{}
	}
	return backend.Capabilities{Workloads: c.Workloads, TTTTypes: c.TttTypes, Phases: c.Phases,
		Dtypes: c.Dtypes, Devices: c.Devices, Backbones: c.Backbones}
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
	return &pb.Config{Workload: c.Workload, ModelSize: c.ModelSize, TttType: c.TTTType,
		Backward: c.Backward, InnerOnly: c.InnerOnly, Batch: int32(c.Batch), SeqLen: int32(c.SeqLen),
		MiniBatch: int32(c.MiniBatch), Dtype: c.Dtype, Backbone: c.Backbone,
		Warmup: int32(c.Warmup), Repeats: int32(c.Repeats)}
}

func configFromProto(c *pb.Config) result.Config {
	if c == nil {
		return result.Config{}
	}
	return result.Config{Workload: c.Workload, ModelSize: c.ModelSize, TTTType: c.TttType,
		Backward: c.Backward, InnerOnly: c.InnerOnly, Batch: int(c.Batch), SeqLen: int(c.SeqLen),
		MiniBatch: int(c.MiniBatch), Dtype: c.Dtype, Backbone: c.Backbone,
		Warmup: int(c.Warmup), Repeats: int(c.Repeats)}
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

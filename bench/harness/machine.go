package harness

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine describes where the harness ran: the figures mean little without it.
type Machine struct {
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	CPUModel  string `json:"cpu_model"`
	NumCPU    int    `json:"num_cpu"`
	// LoadAvg is /proc/loadavg when the measurements started: other work on a shared machine.
	LoadAvg string `json:"load_avg"`
	// LoadAvgEnd is /proc/loadavg when they ended.
	LoadAvgEnd string `json:"load_avg_end"`
}

func thisMachine() Machine {
	return Machine{
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		CPUModel:  cpuModel(),
		NumCPU:    runtime.NumCPU(),
		LoadAvg:   loadAvg(),
	}
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

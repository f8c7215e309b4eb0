package plugin

import (
	hclog "github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
)

// PluginSet is the plugin side's go-plugin set: one entry per service the
// plugin supplies (nil arguments are left out; lifecycle is required by
// Serve). Serve builds it; use it directly only to serve without Serve.
func PluginSet(lifecycle Lifecycle, platform Platform, toolset Toolset) goplugin.PluginSet {
	set := goplugin.PluginSet{}
	if lifecycle != nil {
		set[NameLifecycle] = &LifecycleGRPCPlugin{Impl: lifecycle}
	}
	if platform != nil {
		set[NamePlatform] = &PlatformGRPCPlugin{Impl: platform}
	}
	if toolset != nil {
		set[NameToolset] = &ToolsetGRPCPlugin{Impl: toolset}
	}
	return set
}

// PluginMap is the host side's go-plugin set (ClientConfig.Plugins): every
// service, so the host can dispense any of them. Dispensing always works;
// a service the plugin does not serve answers codes.Unimplemented, so hosts
// consult DescribeResponse.capabilities first. logger receives panics of the
// host callback server; nil discards them.
func PluginMap(logger hclog.Logger) goplugin.PluginSet {
	return goplugin.PluginSet{
		NameLifecycle: &LifecycleGRPCPlugin{Logger: logger},
		NamePlatform:  &PlatformGRPCPlugin{},
		NameToolset:   &ToolsetGRPCPlugin{},
	}
}

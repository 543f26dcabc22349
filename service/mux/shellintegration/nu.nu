# mux shell integration for nushell: OSC 7 (working directory) and OSC 133 prompt and
# command markers, each marker carrying this launch's token.
#
# mux puts <launch dir>/data first in XDG_DATA_DIRS, so nushell loads this file from
# its vendor autoload directory; the file puts XDG_DATA_DIRS back at once and only
# appends hooks: the user's files are never changed. Installed by
# `muxctl shell-integration install nu`, it has no launch directory and reports
# the working directory only. The token stays in a variable the hooks capture:
# never in $env, which every program started from the shell would inherit.

const mux_launch_dir = r#'__MUX_LAUNCH_DIR__'#

let mux_active = ($env.MUX_PANE? | is-not-empty) and ($env.__mux_integrated? | is-empty)
let mux_token = if $mux_active and ($mux_launch_dir | is-not-empty) {
    try { open --raw ($mux_launch_dir | path join token) | str trim } catch { "" }
} else { "" }
let mux_host = if $mux_active { sys host | get hostname } else { "" }

if "MUX_USER_XDG_DATA_DIRS" in $env {
    if ($env.MUX_USER_XDG_DATA_DIRS | is-empty) {
        hide-env XDG_DATA_DIRS
    } else {
        $env.XDG_DATA_DIRS = $env.MUX_USER_XDG_DATA_DIRS
    }
    hide-env MUX_USER_XDG_DATA_DIRS
}

if $mux_active {
    $env.__mux_integrated = "1"
    $env.config.hooks.pre_prompt = ($env.config.hooks.pre_prompt? | default [] | append {||
        let exit_status = $env.LAST_EXIT_CODE
        if ($mux_token | is-not-empty) and ($env.__mux_ran_command? | default "0") == "1" {
            print -n $"\e]133;D;($exit_status);mux_token=($mux_token)\a"
        }
        $env.__mux_ran_command = "0"
        print -n $"\e]7;file://($mux_host)($env.PWD | url encode)\a"
        if ($mux_token | is-not-empty) { print -n $"\e]133;A;mux_token=($mux_token)\a" }
    })
    $env.config.hooks.pre_execution = ($env.config.hooks.pre_execution? | default [] | append {||
        if ($mux_token | is-not-empty) {
            $env.__mux_ran_command = "1"
            print -n $"\e]133;C;mux_token=($mux_token);cmdline_url=(commandline | url encode)\a"
        }
    })
}

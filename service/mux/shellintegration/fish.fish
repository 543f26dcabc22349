# mux shell integration for fish: OSC 7 (working directory) and OSC 133 prompt and
# command markers, each marker carrying this launch's token.
#
# mux puts <launch dir>/data first in XDG_DATA_DIRS, so fish reads this file from
# vendor_conf.d before the user's config; it puts XDG_DATA_DIRS back at once and
# only adds event handlers: the user's files are never changed.

if status is-interactive; and not set -q __mux_integrated
    set -g __mux_integrated 1
    set -g __mux_token ""
    set -l launch_dir (string replace -r '/data/fish/vendor_conf.d$' '' -- (status dirname))
    if test -r $launch_dir/token
        read -g __mux_token <$launch_dir/token
    end
    if set -q MUX_USER_XDG_DATA_DIRS
        if test -n "$MUX_USER_XDG_DATA_DIRS"
            set -gx XDG_DATA_DIRS $MUX_USER_XDG_DATA_DIRS
        else
            set -e XDG_DATA_DIRS
        end
        set -e MUX_USER_XDG_DATA_DIRS
    end

    function __mux_prompt --on-event fish_prompt
        set -l last_status $status
        if test -n "$__mux_token"; and set -q __mux_ran_command
            printf '\e]133;D;%s;mux_token=%s\a' $last_status $__mux_token
        end
        set -e __mux_ran_command
        printf '\e]7;file://%s%s\a' $hostname (string escape --style=url -- $PWD)
        if test -n "$__mux_token"
            printf '\e]133;A;mux_token=%s\a' $__mux_token
        end
    end

    function __mux_preexec --on-event fish_preexec
        test -n "$__mux_token"; or return
        set -g __mux_ran_command 1
        printf '\e]133;C;mux_token=%s;cmdline_url=%s\a' $__mux_token (string escape --style=url -- "$argv")
    end
end

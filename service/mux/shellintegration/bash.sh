# mux shell integration for bash: OSC 7 (working directory) and OSC 133 prompt and
# command markers, each marker carrying this launch's token.
#
# Loaded through `bash --rcfile <launch dir>/bashrc`, which sources this file and
# then the user's own startup files. It never changes them. Sourced by hand
# (`muxctl shell-integration`), without a token file, it emits OSC 7 only.

if [[ $- == *i* && -z ${__mux_integrated-} ]]; then
__mux_integrated=1
__mux_token=""
if [[ -n ${__mux_launch_dir-} && -r $__mux_launch_dir/token ]]; then
    read -r __mux_token < "$__mux_launch_dir/token"
fi
__mux_ran_command=0

__mux_urlencode() {
    local LC_ALL=C text=$1 out="" char i
    for (( i = 0; i < ${#text}; i++ )); do
        char=${text:i:1}
        case $char in
            [a-zA-Z0-9/._~-]) out+=$char ;;
            *) printf -v char '%%%02X' "'$char"; out+=$char ;;
        esac
    done
    printf '%s' "$out"
}

__mux_precmd() {
    local status=$?
    if [[ -n $__mux_token ]]; then
        if [[ $__mux_ran_command == 1 ]]; then
            printf '\e]133;D;%s;mux_token=%s\a' "$status" "$__mux_token"
        fi
        __mux_ran_command=0
    fi
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$(__mux_urlencode "$PWD")"
    [[ -n $__mux_token ]] && printf '\e]133;A;mux_token=%s\a' "$__mux_token"
    return $status
}

__mux_preexec() {
    # Run from PS0 (in a subshell), after a command line is read and before it runs.
    [[ -n $__mux_token ]] || return 0
    local line
    line=$(HISTTIMEFORMAT= builtin history 1)
    line=${line#*[0-9]  }
    printf '\e]133;C;mux_token=%s;cmdline_url=%s\a' "$__mux_token" "$(__mux_urlencode "$line")"
}

if [[ ${PROMPT_COMMAND-} != *__mux_precmd* ]]; then
    PROMPT_COMMAND="__mux_precmd${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
fi
# PS0's command substitution runs in a subshell; the subscript's arithmetic runs
# in the shell itself and expands to nothing: it notes that a command ran.
PS0='${__mux_nothing[__mux_ran_command=1]}$(__mux_preexec)'"${PS0-}"
fi

# mux shell integration for zsh: OSC 7 (working directory) and OSC 133 prompt and
# command markers, each marker carrying this launch's token.
#
# Loaded from the launch directory's .zshenv (mux points ZDOTDIR there, and
# puts the user's ZDOTDIR back before anything of the user's is read). It only
# adds hooks; it never changes the user's files.

if [[ -o interactive && -z ${__mux_integrated-} ]]; then
typeset -g __mux_integrated=1
typeset -g __mux_token=""
if [[ -n ${__mux_launch_dir-} && -r $__mux_launch_dir/token ]]; then
    __mux_token=$(<$__mux_launch_dir/token)
fi
typeset -g __mux_ran_command=""

__mux_urlencode() {
    emulate -L zsh
    setopt extendedglob
    local LC_ALL=C text=$1 out="" char
    for char in ${(s::)text}; do
        if [[ $char == [a-zA-Z0-9/._~-] ]]; then
            out+=$char
        else
            out+=$(printf '%%%02X' "'$char")
        fi
    done
    print -rn -- $out
}

__mux_precmd() {
    local exit_status=$?
    if [[ -n $__mux_token ]]; then
        if [[ -n $__mux_ran_command ]]; then
            printf '\e]133;D;%s;mux_token=%s\a' $exit_status $__mux_token
        fi
        __mux_ran_command=""
    fi
    printf '\e]7;file://%s%s\a' "${HOST-}" "$(__mux_urlencode $PWD)"
    [[ -n $__mux_token ]] && printf '\e]133;A;mux_token=%s\a' $__mux_token
    return 0
}

__mux_preexec() {
    [[ -n $__mux_token ]] || return 0
    __mux_ran_command=1
    printf '\e]133;C;mux_token=%s;cmdline_url=%s\a' $__mux_token "$(__mux_urlencode $1)"
}

autoload -Uz add-zsh-hook
add-zsh-hook precmd __mux_precmd
add-zsh-hook preexec __mux_preexec
fi

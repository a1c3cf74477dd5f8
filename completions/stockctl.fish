# fish completion for stockctl. Subcommands and options come from `stockctl __complete`.

function __stockctl_subcommand
    set -l subs (stockctl __complete 2>/dev/null | string match -v -- '-*')
    for w in (commandline -opc)[2..-1]
        if contains -- $w $subs
            echo $w
            return
        end
    end
end

function __stockctl_options
    for line in (stockctl __complete (__stockctl_subcommand) 2>/dev/null | string match -- '-*')
        string replace -r '=.*' '' -- $line
    end
end

function __stockctl_value_type
    set -l prev (commandline -opc)[-1]
    for line in (stockctl __complete (__stockctl_subcommand) 2>/dev/null | string match -- '--*=*')
        if test (string replace -r '=.*' '' -- $line) = "$prev"
            string replace -r '.*=' '' -- $line
            return
        end
    end
end

# After "--" every word is an item id, never an option or a subcommand.
function __stockctl_after_double_dash
    contains -- -- (commandline -opc)[2..-1]
end

complete -c stockctl -f
complete -c stockctl -n 'test -z "$(__stockctl_subcommand)"; and not string match -q -- "-*" (commandline -ct); and not __stockctl_after_double_dash' \
    -a '(stockctl __complete 2>/dev/null | string match -v -- "-*")'
complete -c stockctl -n 'string match -q -- "-*" (commandline -ct); and not __stockctl_after_double_dash' -a '(__stockctl_options)'
complete -c stockctl -n 'test "$(__stockctl_value_type)" = FILE' -F
complete -c stockctl -n 'test "$(__stockctl_value_type)" = DIR' -a '(__fish_complete_directories)'
complete -c stockctl -n 'test "$(__stockctl_value_type)" = FORMAT' -a 'csv tsv json ndjson jsonl'
complete -c stockctl -n 'test "$(__stockctl_value_type)" = FORMAT; and test "$(__stockctl_subcommand)" = get' -a 'lines'

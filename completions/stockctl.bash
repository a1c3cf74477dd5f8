# bash completion for stockctl
# The subcommands and options come from the binary itself (stockctl __complete), so this file
# never falls behind the command line.

_stockctl() {
  local cur prev cword
  local -a words
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n = || return
  else
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
  fi
  local cmd=${words[0]} sub="" i w
  # After "--" every word is an item id, never an option or a subcommand: nothing to offer.
  for ((i = 1; i < cword; i++)); do
    [[ ${words[i]} == -- ]] && { COMPREPLY=(); return; }
  done
  local subs
  subs=$("$cmd" __complete 2>/dev/null | grep -v '^-')
  for ((i = 1; i < cword; i++)); do
    for w in $subs; do
      [[ ${words[i]} == "$w" ]] && sub=$w
    done
    [[ -n $sub ]] && break
  done
  local options
  options=$("$cmd" __complete $sub 2>/dev/null | grep '^-')

  # The value of an option: files for FILE, directories for DIR, the formats for FORMAT, nothing to guess otherwise.
  local line type=""
  for line in $options; do
    [[ $line == "$prev="* ]] && type=${line#*=}
  done
  case $type in
    FILE) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    DIR) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
    FORMAT)
      local formats="csv tsv json ndjson jsonl"
      [[ $sub == get ]] && formats+=" lines"  # get --file: one SKU per line
      mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur"); return ;;
    ?*) COMPREPLY=(); return ;;
  esac

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(printf '%s\n' $options | sed 's/=.*//')" -- "$cur")
  elif [[ -z $sub ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  fi
}
complete -F _stockctl stockctl

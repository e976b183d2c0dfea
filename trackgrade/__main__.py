from trackgrade.cli import main

main()

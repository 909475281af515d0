from hallouminate.cli.main import main

main()
